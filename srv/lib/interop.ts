/**
 * The default export of a CommonJS package compiled from ES modules (`exports.default = X`).
 * Native ESM import gives `{ default: { default: X } }`; the CommonJS build under jest gives
 * `{ default: X }`. This answers X in both.
 */
export function defaultExport<T>(module: any): T {
  const outer = module?.default ?? module
  return (outer?.default ?? outer) as T
}
