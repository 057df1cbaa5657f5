// Types of cli-cache.mjs for the tests (plain JavaScript: it runs before any TypeScript loader).
export declare const PRECOMPILE_VARIABLE: 'APSUP_CLI_PRECOMPILE';
export declare const PACKAGE_ROOT: string;
export declare function cliBundle(options?: { root?: string; cacheDir?: string }): string | null;
