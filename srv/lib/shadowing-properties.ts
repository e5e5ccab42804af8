/**
 * Names a JSON body may not use as property names: those of `Object.prototype`. Parsed JSON makes
 * them own properties that shadow the prototype's members, so `{"toString": 1}` is an object that
 * every string conversion (a message naming the value, a template literal, `String(value)`) fails on.
 */
const SHADOWING = new Set(Object.getOwnPropertyNames(Object.prototype))

/**
 * The path (`a.b[2].toString`) of the first property in `value` that shadows an `Object.prototype`
 * member, if any. Walked with a stack of its own: a body may nest deeper than the call stack.
 */
export function shadowingProperty(value: unknown): string | undefined {
  const pending: [unknown, string][] = [[value, '']]
  while (pending.length) {
    const [item, path] = pending.pop()!
    if (Array.isArray(item)) {
      for (let index = item.length - 1; index >= 0; index--) pending.push([item[index], `${path}[${index}]`])
    } else if (item && typeof item === 'object') {
      const names = Object.keys(item)
      for (const name of names) if (SHADOWING.has(name)) return clipped(path ? `${path}.${name}` : name)
      for (let index = names.length - 1; index >= 0; index--) pending.push([(item as Record<string, unknown>)[names[index]], path ? `${path}.${names[index]}` : names[index]])
    }
  }
  return undefined
}

/** A path nested very deep is named by its end. */
const clipped = (path: string) => (path.length > 100 ? '…' + path.slice(-99) : path)

export const shadowingMessage = (at: string) =>
  `${at} is not a property name the service takes (it names a member every JavaScript object has); rename or remove it`
