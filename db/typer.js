const { spawnSync } = require('node:child_process')
const { createHash } = require('node:crypto')
const { existsSync, readdirSync, readFileSync, writeFileSync } = require('node:fs')
const { join, relative } = require('node:path')

/**
 * `npm run typer`: the model's TypeScript types (@cds-models, cds-typer), written again only when
 * the model changed. The hash of every .cds file, package.json and the lock (which pins cds-typer
 * and the plugins' models) is kept beside the types; while it matches, nothing is written. So
 * `npm start` and `npm test` start without regenerating, and two runs at once never rewrite files
 * the other is reading. `npm run typer -- --force` writes them regardless.
 */
const root = join(__dirname, '..')
const output = join(root, '@cds-models')
const stamp = join(output, '.model-hash')
const SKIPPED = new Set(['node_modules', '.git', 'gen', '@cds-models', 'data', 'coverage', '.ci', '.artifacts'])

function cdsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return SKIPPED.has(entry.name) || entry.name.startsWith('.tmp') ? [] : cdsFiles(path)
    return entry.name.endsWith('.cds') ? [path] : []
  })
}

function modelHash() {
  const hash = createHash('sha256')
  for (const file of [...cdsFiles(root).sort(), join(root, 'package.json'), join(root, 'package-lock.json')]) {
    if (!existsSync(file)) continue
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0')
  }
  return hash.digest('hex')
}

const current = modelHash()
const force = process.argv.includes('--force')
if (!force && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === current) process.exit(0)

const typer = spawnSync(join(root, 'node_modules', '.bin', 'cds-typer'), ['*', '--outputDirectory', '@cds-models', '--ieee754compatible', 'true'], { cwd: root, stdio: 'inherit' })
if (typer.status !== 0) process.exit(typer.status ?? 1)
writeFileSync(stamp, current + '\n')
