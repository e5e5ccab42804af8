import cds from '@sap/cds'
import { badInput } from './errors.ts'
import { queryBudget, type QueryBudget } from './query-budget.ts'

/**
 * The query options of a read over HTTP, checked before the service reads, as CAP sees them: CAP
 * decodes the whole URL before it parses the options, so an option written encoded inside another
 * (`$filter=x%26%24apply%3D…`) is one of its own to CAP and is one here. What a read may cost is
 * bounded before it runs:
 * - `$top` within the page bound (CAP would silently cap it), no negative `$top`/`$skip` (CAP would
 *   pass them on), no `$skip` beyond what the databases can count; the same at every `$expand` level;
 * - `$expand` at most `expandDepth` levels deep;
 * - the rows a read may return, counted before it runs as the product of the `$top`s along each
 *   `$expand` path, summed over the paths, at most `rowBudget`; to-many expansions without `$top`
 *   read at most a page per parent row, the largest page that keeps the read within the budget;
 *   when a parent has more, the read is refused (page it with `$top`/`$skip` inside `$expand`),
 *   never cut short;
 * - no system query option given twice, and no `$apply` (the OData adapter's support for it fails
 *   on several transformations), at any level.
 * A single property (`Blocks('…')/height`) is read as it is: the options of collections and
 * entities do not apply to it (the database layer fails on some of them). Reads made by code (no
 * HTTP request) are trusted and only get the page a `$skip` without `$top` needs.
 */

type ReadBudget = Pick<QueryBudget, 'rowBudget' | 'expandDepth'>

const pageBound = () => Number((cds.env as any).query?.limit?.max ?? 1000)
const defaultPage = () => Math.min(Number((cds.env as any).query?.limit?.default ?? 100), pageBound())

/**
 * Checks a READ's options and bounds its cost; answers the check its answer must pass afterwards
 * (to-many expansions read without `$top` must not have had more than a page), if any.
 */
export function guardQueryOptions(req: cds.Request): ((result: unknown) => void) | undefined {
  const select = (req.query as any)?.SELECT
  const url = (req as any).http?.req?.url
  if (typeof url !== 'string') {
    completeExpandPages(select?.columns)
    return undefined
  }
  refuseUnclosedLiterals(url)
  const options = queryOptionsOf(url)
  refuseDuplicates(options)
  if (mentionsApply(url)) throw badInput('UNSUPPORTED_QUERY_OPTION', '$apply is not offered; use $filter, $select, $expand, $orderby, $top, $skip and $count', '$apply')
  const property = propertyRead(req)
  const misplaced = property && COLLECTION_OPTIONS.find(option => options.has(option))
  if (misplaced) throw badInput('QUERY_OPTION_NOT_APPLICABLE', `${misplaced} does not apply to the single property ${property}`, misplaced)
  if (options.has('$top')) checkTop(options.get('$top'))
  if (options.has('$skip')) checkSkip(options.get('$skip'))
  if (!select || property) return undefined
  const rows = select.one ? 1 : Math.min(wholeNumber(options.get('$top')) ?? defaultPage(), pageBound())
  const cost = new ReadCost(queryBudget(), rows, select.columns, req.target as any, localName(req.target))
  cost.bound()
  return cost.paged.length ? result => cost.checkPages(result) : undefined
}

/** The query options of a target as CAP reads them: the whole target decoded, then split at each `&` outside a string literal. */
function queryOptionsOf(target: string): Map<string, string[]> {
  const decoded = cds.utils.decodeURIComponent(target)
  const start = decoded.indexOf('?')
  const options = new Map<string, string[]>()
  if (start < 0) return options
  for (const option of outsideLiterals(decoded.slice(start + 1), '&')) {
    const equals = option.indexOf('=')
    const name = equals < 0 ? option : option.slice(0, equals)
    const value = equals < 0 ? '' : option.slice(equals + 1)
    options.set(name, [...(options.get(name) ?? []), value])
  }
  return options
}

/** Splits text at `separator` wherever it is not inside a single-quoted OData string literal. */
function outsideLiterals(text: string, separator: string): string[] {
  const parts: string[] = []
  let inLiteral = false
  let start = 0
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "'") inLiteral = !inLiteral
    else if (text[i] === separator && !inLiteral) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts.filter(part => part !== '')
}

/** Whether `$apply=` stands anywhere in the decoded target outside a string literal (CAP takes it inside `$expand` too). */
/**
 * A query whose quotes do not pair (a quote inside a literal is written twice, so a well-formed
 * query has an even number) is refused: read up to an unclosed literal, the options after it would
 * be hidden from these checks and still be read by the parser that follows.
 */
function refuseUnclosedLiterals(target: string) {
  const decoded = cds.utils.decodeURIComponent(target)
  const start = decoded.indexOf('?')
  if (start < 0) return
  const quotes = decoded.slice(start + 1).split("'").length - 1
  if (quotes % 2) throw badInput('UNCLOSED_LITERAL', 'A string literal in the query options is not closed (a quote inside a literal is written twice)', decoded.slice(start + 1, start + 41))
}

function mentionsApply(target: string): boolean {
  const decoded = cds.utils.decodeURIComponent(target)
  const code = decoded.replace(/'[^']*'/g, "''")
  return /\$apply\s*=/i.test(code)
}

function refuseDuplicates(options: Map<string, string[]>) {
  for (const [name, values] of options) {
    if (name.startsWith('$') && values.length > 1) throw badInput('DUPLICATE_QUERY_OPTION', `${name} is given ${values.length} times; give each query option once (combine several $expand items with commas)`, name)
  }
}

function checkTop(values: string[] | undefined) {
  const value = values?.[0]
  const max = pageBound()
  const top = wholeNumber(values)
  if (top === undefined) throw badInput('INVALID_TOP', `$top must be a whole number from 0 to ${max}, got '${clip(String(value))}'`, '$top')
  if (top > max) throw badInput('TOP_LIMIT_EXCEEDED', `$top=${top} exceeds the page bound of ${max}; page with $skip or follow @odata.nextLink`, '$top')
}

function checkSkip(values: string[] | undefined) {
  if (wholeNumber(values) === undefined) throw badInput('INVALID_SKIP', `$skip must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got '${clip(String(values?.[0]))}'`, '$skip')
}

/** A whole number from 0 up to 2^53 - 1 written in decimal digits (the first value given), or undefined. */
function wholeNumber(values: string[] | undefined): number | undefined {
  const value = values?.[0]
  if (typeof value !== 'string' || !/^\d{1,16}$/.test(value)) return undefined
  const number = Number(value)
  return Number.isSafeInteger(number) ? number : undefined
}

interface ExpandColumn {
  ref?: string[]
  expand?: unknown[]
  limit?: { rows?: { val?: unknown }; offset?: { val?: unknown } }
  groupBy?: unknown
  having?: unknown
}

/** One `$expand` of the read: its rows per parent (its `$top`, or undefined: a page chosen for the read), and its own `$expand`s. */
interface Expansion {
  column: ExpandColumn
  name: string
  path: string[]
  toMany: boolean
  top?: number
  children: Expansion[]
}

/** A to-many expansion read without `$top`: where it sits in the answer, and the page it may fill. */
interface PagedExpansion {
  path: string[]
  page: number
  name: string
}

/**
 * The rows a read returns, counted before it runs: the top level's rows, plus for each expansion
 * its parents' rows times its own (one for a to-one, its `$top` for a to-many, else the page).
 * Expansions read without `$top` share one page per parent, the largest (up to the page bound) that
 * keeps the whole read within the row budget, so a read is refused for its size only when the
 * `$top`s it names already exceed the budget.
 */
class ReadCost {
  readonly paged: PagedExpansion[] = []
  private readonly budget: ReadBudget
  private readonly topRows: number
  private readonly expansions: Expansion[]

  constructor(budget: ReadBudget, topRows: number, columns: unknown[] | undefined, entity: any, path: string) {
    this.budget = budget
    this.topRows = topRows
    this.expansions = expansionsOf(columns, entity, path, [], 1, budget.expandDepth)
  }

  /** Chooses the page of the expansions without `$top` and asks each for one row more (to see whether it had more); refuses a read beyond the budget. */
  bound() {
    const page = this.largestPage()
    if (page === 0) {
      const rows = this.rowsWith(1)
      throw badInput('ROW_BUDGET_EXCEEDED', `This read may return ${rows} rows (the $top of each level times its parents); at most ${this.budget.rowBudget} are read at once: lower $top at some level, or expand less`, '$expand')
    }
    const apply = (expansions: Expansion[]) => {
      for (const expansion of expansions) {
        if (expansion.toMany && expansion.top === undefined) {
          expansion.column.limit = { ...expansion.column.limit, rows: { val: page + 1 } }
          this.paged.push({ path: expansion.path, page, name: expansion.name })
        }
        // A to-one's $skip without $top: the database layer needs a row count with an offset, and a to-one has one row at most.
        if (!expansion.toMany && expansion.column.limit?.offset && !expansion.column.limit.rows) expansion.column.limit = { ...expansion.column.limit, rows: { val: 1 } }
        apply(expansion.children)
      }
    }
    apply(this.expansions)
  }

  /** Refuses an answer in which an expansion read without `$top` had more rows than its page. */
  checkPages(result: unknown) {
    for (const paged of this.paged) {
      if (overflows(result, paged.path, paged.page)) {
        throw badInput('EXPAND_PAGE_EXCEEDED', `${paged.name} holds more than ${paged.page} rows for one parent, the most this read may take per parent without $top (its rows are bounded at ${this.budget.rowBudget}): add $top and $skip inside its $expand to page through them, or read fewer parents`, '$expand')
      }
    }
  }

  /** The largest page (0 when even one row per parent exceeds the budget) that keeps the read within it. */
  private largestPage(): number {
    let low = 0
    let high = pageBound()
    while (low < high) {
      const middle = Math.ceil((low + high) / 2)
      if (this.rowsWith(middle) <= this.budget.rowBudget) low = middle
      else high = middle - 1
    }
    return low
  }

  private rowsWith(page: number): number {
    const count = (expansions: Expansion[], parents: number): number =>
      expansions.reduce((sum, expansion) => {
        const rows = parents * (expansion.toMany ? expansion.top ?? page : 1)
        return sum + rows + count(expansion.children, rows)
      }, 0)
    return this.topRows + count(this.expansions, this.topRows)
  }
}

/** The read's expansions, checked: at most `maxDepth` levels, `$top`/`$skip` in bounds, no `$apply`. */
function expansionsOf(columns: unknown[] | undefined, entity: any, path: string, at: string[], depth: number, maxDepth: number): Expansion[] {
  const found: Expansion[] = []
  for (const column of (columns ?? []) as ExpandColumn[]) {
    if (!column || typeof column !== 'object' || !Array.isArray(column.expand) || !column.ref?.length) continue
    const name = `${path}/${column.ref.join('/')}`
    if (depth > maxDepth) throw badInput('EXPAND_TOO_DEEP', `$expand nests ${name} ${depth} levels deep; at most ${maxDepth} levels are read at once (read deeper levels from the entities they belong to)`, '$expand')
    if (column.groupBy || column.having) throw badInput('UNSUPPORTED_QUERY_OPTION', `$apply is not offered inside $expand (${name})`, '$apply')
    const association = entity?.elements?.[column.ref[0]]
    const toMany = !!association?.is2many
    // A to-one expansion's $top and $skip are checked too: the database is given them all the same.
    const checkedTop = checkedExpandLimit(column, name)
    const top = toMany ? checkedTop : undefined
    const here = [...at, column.ref[0]]
    found.push({ column, name, path: here, toMany, top, children: expansionsOf(column.expand, association?._target, name, here, depth + 1, maxDepth) })
  }
  return found
}

/** A to-many expansion's `$top` (undefined when it names none), its `$top` and `$skip` checked. */
function checkedExpandLimit(column: ExpandColumn, name: string): number | undefined {
  const top = column.limit?.rows?.val
  const skip = column.limit?.offset?.val
  if (skip !== undefined && !(Number.isSafeInteger(skip) && (skip as number) >= 0)) throw badInput('INVALID_SKIP', `$skip in $expand of ${name} must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, got '${clip(String(skip))}'`, '$skip')
  if (top === undefined) return undefined
  if (!(Number.isSafeInteger(top) && (top as number) >= 0)) throw badInput('INVALID_TOP', `$top in $expand of ${name} must be a whole number from 0 to ${pageBound()}, got '${clip(String(top))}'`, '$top')
  if ((top as number) > pageBound()) throw badInput('TOP_LIMIT_EXCEEDED', `$top=${top} in $expand of ${name} exceeds the page bound of ${pageBound()}`, '$top')
  return top as number
}

/** Whether, anywhere along `path` in the answer, a list has more than `page` rows. */
function overflows(value: unknown, path: string[], page: number): boolean {
  if (Array.isArray(value)) return value.some(row => overflows(row, path, page))
  if (!value || typeof value !== 'object') return false
  const [head, ...rest] = path
  const child = (value as Record<string, unknown>)[head]
  if (!rest.length) return Array.isArray(child) && child.length > page
  return overflows(child, rest, page)
}

const COLLECTION_OPTIONS = ['$select', '$expand', '$filter', '$orderby', '$top', '$skip', '$count', '$search', '$compute']

/** The property a read addresses (`…/height` or `…/height/$value`), when it addresses one. */
function propertyRead(req: cds.Request): string | undefined {
  const path = String((req as any).http?.req?.path ?? '')
  const segments = path.split('/').filter(segment => segment && segment !== '$value')
  const last = segments[segments.length - 1]?.split('(')[0]
  const element = last ? (req.target as any)?.elements?.[last] : undefined
  return element && !element.isAssociation ? last : undefined
}

/** An expanded `$skip` without `$top` gets the page bound as its row count, at every level (the database layer needs a row count with an offset). */
function completeExpandPages(columns: any[] | undefined) {
  for (const column of columns ?? []) {
    if (!Array.isArray(column?.expand)) continue
    if (column.limit?.offset && !column.limit.rows) column.limit.rows = { val: pageBound() }
    completeExpandPages(column.expand)
  }
}

const localName = (target: any) => String(target?.name ?? '').split('.').pop() ?? ''
const clip = (text: string) => (text.length > 40 ? text.slice(0, 37) + '...' : text)
