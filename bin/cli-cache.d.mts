// Types of cli-cache.mjs for the tests (plain JavaScript: it runs before any TypeScript loader).
export declare const PRECOMPILE_VARIABLE: 'APSUP_CLI_PRECOMPILE';
export declare const PACKAGE_ROOT: string;
export declare function cliBundle(options?: { root?: string; cacheDir?: string }): string | null;
/** The packages left external: every one package.json names except its `apsup.compiledPackages`. */
export declare function externalPackages(root?: string): string[];
/** esbuild options shared by the compiled CLI, the child entries and the compiled tests. */
export declare function bundleOptions(root?: string): {
  bundle: true;
  splitting: true;
  format: 'esm';
  platform: 'node';
  target: string;
  outExtension: Record<string, string>;
  logLevel: 'silent';
  keepNames: true;
  external: string[];
};
/** esbuild's package.json path, hoisted or as tsx's own dependency, resolved with `require` (default: from bin/). */
export declare function resolveEsbuildPackage(require?: NodeJS.Require): string;
