import { availableParallelism, totalmem } from 'node:os'
import { availableCores, availableMemory } from '../../srv/lib/host-capacity.ts'
import { defaultProvers, PROOF_PEAK_BYTES } from '../../srv/chains/chain-b/config.ts'

// A container's quota, not the host's size, bounds what it runs: cgroup files as a container shows them.
const files = (entries: Record<string, string>) => (path: string) => entries[path]
const GiB = 1024 ** 3

test('the cores are the CPU quota (v2 or v1), rounded up, never more than the host has', () => {
  expect(availableCores(files({ '/sys/fs/cgroup/cpu.max': '150000 100000' }))).toBe(Math.min(2, availableParallelism()))
  expect(availableCores(files({ '/sys/fs/cgroup/cpu.max': '50000 100000' }))).toBe(1)
  expect(availableCores(files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '100000', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000' }))).toBe(1)
  expect(availableCores(files({ '/sys/fs/cgroup/cpu.max': 'max 100000' }))).toBe(availableParallelism())
  expect(availableCores(files({ '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1' }))).toBe(availableParallelism())
  expect(availableCores(files({}))).toBe(availableParallelism())
})

test('the memory is the container limit (v2 or v1), never more than the host has', () => {
  expect(availableMemory(files({ '/sys/fs/cgroup/memory.max': String(GiB) }))).toBe(Math.min(GiB, totalmem()))
  expect(availableMemory(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': String(512 * 1024 ** 2) }))).toBe(512 * 1024 ** 2)
  expect(availableMemory(files({ '/sys/fs/cgroup/memory.max': 'max' }))).toBe(totalmem())
  expect(availableMemory(files({}))).toBe(totalmem())
})

test('provers: the cores but one, bounded by what the memory holds beside the server, at least one', () => {
  expect(defaultProvers(8, 64 * GiB)).toBe(7)
  expect(defaultProvers(8, 2 * GiB)).toBe(Math.floor((2 * GiB - 256 * 1024 ** 2) / PROOF_PEAK_BYTES))
  expect(defaultProvers(8, 512 * 1024 ** 2)).toBe(1)
  expect(defaultProvers(1, 64 * GiB)).toBe(1)
})
