import { execFileSync } from 'node:child_process'
import { join } from 'node:path'

/**
 * Runs once before all suites. TypeScript handlers are only loaded by CAP when CDS_TYPESCRIPT is
 * set. With the `pg` profile the schema is deployed first (CAP serves PostgreSQL without deploying).
 */
export default function globalSetup() {
  process.env.CDS_TYPESCRIPT = 'true'
  const profiles = (process.env.CDS_ENV ?? '').split(',').map(p => p.trim())
  if (profiles.includes('pg')) {
    const root = join(__dirname, '..', '..')
    execFileSync(join(root, 'node_modules', '.bin', 'cds-deploy'), [], { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } })
  }
}
