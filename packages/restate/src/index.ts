// @wf/restate: durable, distributed execution of @wf runs on Restate (issue 15).

/** The Restate server release this package is tested against (`@restatedev/restate-server`). */
export const RESTATE_SERVER_VERSION = '1.7.12';
