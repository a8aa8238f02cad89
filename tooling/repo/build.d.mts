/** `tsc -b` of a project (the whole solution by default), then the bundles its built packages run. */
export function build(project?: string): void;
