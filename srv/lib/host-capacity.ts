import { readFileSync } from 'node:fs'
import { availableParallelism, totalmem } from 'node:os'

/**
 * What this process may use of its host: a container (Cloud Foundry, Kubernetes) sees the host's
 * cores and memory in `node:os`, not its own quota, which cgroup v2 states in cpu.max and
 * memory.max (v1 in cpu.cfs_quota_us and memory.limit_in_bytes).
 */

const CGROUP = '/sys/fs/cgroup'

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8').trim()
  } catch {
    return undefined
  }
}

/** The cores the container may use: its CPU quota (rounded up) when it has one below the host's cores, else the host's. */
export function availableCores(read: (path: string) => string | undefined = readText): number {
  const host = availableParallelism()
  const [quota, period] = (read(`${CGROUP}/cpu.max`) ?? '').split(/\s+/)
  const v1Quota = read(`${CGROUP}/cpu/cpu.cfs_quota_us`)
  const v1Period = read(`${CGROUP}/cpu/cpu.cfs_period_us`)
  const cores = quota && quota !== 'max' ? Number(quota) / Number(period) : v1Quota && Number(v1Quota) > 0 ? Number(v1Quota) / Number(v1Period) : Infinity
  return Number.isFinite(cores) && cores > 0 ? Math.max(1, Math.min(host, Math.ceil(cores))) : host
}

/** The bytes of memory the container may use: its limit when it has one below the host's memory, else the host's. */
export function availableMemory(read: (path: string) => string | undefined = readText): number {
  const host = totalmem()
  const limit = Number(read(`${CGROUP}/memory.max`) ?? read(`${CGROUP}/memory/memory.limit_in_bytes`) ?? NaN)
  return Number.isFinite(limit) && limit > 0 ? Math.min(host, limit) : host
}
