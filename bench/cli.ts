import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import cds from '@sap/cds'
import { figures, printLine, printRatio } from './measure.ts'

/**
 * The operator's command line (`npm run gateway -- keys list`) against a SQLite file: a run as
 * the operator makes it (the model compiled before, the file deployed with it) against the
 * baseline of a run that compiles the model and checks the file's schema (the model cache and the
 * file's stamp removed before each run).
 */

const root = cds.root

export async function cliBenchmarks({ runs }: { runs: number }) {
  console.log('operator command line (npm run gateway -- keys list, SQLite file)')
  const folder = mkdtempSync(join(tmpdir(), 'cag-bench-cli-'))
  const database = join(folder, 'db.sqlite')
  const env = { ...process.env, cds_requires_db_credentials_url: database, NODE_ENV: '', CDS_ENV: '' }
  const once = (before?: () => void) => {
    before?.()
    const began = performance.now()
    execFileSync('npm', ['run', '-s', 'gateway', '--', 'keys', 'list'], { cwd: root, env, stdio: 'ignore' })
    return performance.now() - began
  }
  const cold = () => {
    rmSync(join(root, 'node_modules', '.cache', 'cag-model'), { recursive: true, force: true })
    rmSync(`${database}.model`, { force: true })
  }
  try {
    once()
    const compiling = Array.from({ length: runs }, () => once(cold))
    once()
    const warm = Array.from({ length: runs }, () => once())
    printLine('a command, model compiled before', figures(warm))
    printLine('baseline: compiling the model', figures(compiling))
    printRatio('compiled before / compiling', figures(warm), figures(compiling))
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}
