// The DSH release the shipped capsules are written for.

/** The oldest DSH the shipped capsules are written for (dsh-host notes: the usable pin). */
export const MIN_DSH_VERSION = '0.1.0-rc.8';
