// Types for the generator, so tests can import it.
export function renderSources(sources: Readonly<Record<string, string>>): string;
export function readSources(): Record<string, string>;
