export declare const DESIGN: string;
export declare function slug(heading: string): string;
export declare function findReferenceProblems(root: string, files?: readonly string[]): string[];
export declare function linkCitations(root: string, files?: readonly string[]): string[];
