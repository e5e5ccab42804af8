import { LIST_PAGE_SIZE } from '../chains/chain-a/port.ts'
import { stopIfAnswered } from '../lib/request-work.ts'

/**
 * Which part of an upstream list a read's answer can hold. The database answers `$skip` by
 * skipping rows it holds, so a window always starts at the beginning of the list (in the order
 * the answer is sorted by) and reaches as far as `$skip` + `$top`.
 */
export type ListWindow =
  /** The first `upTo` items in the list's own order (`fromEnd`: counted from its newest end). */
  | { kind: 'ordered'; fromEnd: boolean; upTo: number }
  /** The first `upTo` items ordered by their key (`descending`: highest first). */
  | { kind: 'byKey'; descending: boolean; upTo: number }
  /** Every item: the read filters, counts or sorts by something the list is not ordered by. */
  | { kind: 'whole' }

/** Pages one read reads of one list at most; past them, it answers over what has been indexed. */
export const MAX_LIST_PAGES = 100
/** Items whose details one read indexes at most (the service's largest page). */
export const MAX_INDEXED_PER_READ = 1000
/** A $expand without $top covers this many items of a list that is not bounded. */
export const EXPAND_ITEMS = LIST_PAGE_SIZE

export const pagesFor = (items: number) => Math.min(MAX_LIST_PAGES, Math.ceil(items / LIST_PAGE_SIZE))

/** The first page of a list only: what an action answering "the newest entries" needs. */
export const newestPage: ListWindow = { kind: 'ordered', fromEnd: true, upTo: LIST_PAGE_SIZE }

/** Runs `work` for every item, `limit` at a time; a failure is thrown once every started call has settled. */
export async function eachSettled<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0
  let failure: { error: unknown } | undefined
  const worker = async () => {
    while (next < items.length && !failure) {
      const item = items[next++]
      try {
        stopIfAnswered()
        await work(item)
      } catch (error) {
        failure ??= { error }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  if (failure) throw failure.error
}
