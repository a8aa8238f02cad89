export declare const RULES: readonly (readonly [string, RegExp])[];
export declare function lintedFiles(root: string): string[];
export declare function lintText(file: string, text: string): string[];
export declare function lintComments(root: string): string[];
