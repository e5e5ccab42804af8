import { administer, databasesOfRun, onPostgres, quoted } from './postgres.ts'

/**
 * Removes this run's databases: the template and every test file's copy. Dropping them ends the
 * connections test files left idle in their pools (in a run on one worker, in this very process);
 * a pool client without an error listener then raises "terminating connection due to
 * administrator command" (57P01) or "Connection terminated unexpectedly" as an uncaught error,
 * which is expected here and nothing else.
 */
export default async function globalTeardown() {
  const template = process.env.CAG_TEST_TEMPLATE
  if (!onPostgres() || !template) return
  process.on('uncaughtException', ignoreTerminatedConnections)
  const databases = await databasesOfRun(template)
  await administer(...databases.reverse().map(name => `DROP DATABASE IF EXISTS ${quoted(name)} WITH (FORCE)`))
}

function ignoreTerminatedConnections(error: unknown) {
  const terminated = (candidate: unknown) => {
    const { code, message } = (candidate ?? {}) as { code?: string; message?: string }
    return code === '57P01' || /^Connection terminated unexpectedly/.test(String(message))
  }
  if (terminated(error) || terminated((error as { context?: unknown })?.context)) return
  throw error
}
