const cds = require('@sap/cds')
const { existsSync, readdirSync, readFileSync } = require('node:fs')
const { basename, join } = require('node:path')

const { SELECT, INSERT } = cds.ql

/**
 * The seed rows (db/seed/<namespace>-<Entity>.csv: prices, plans, packs, signing policies), added
 * by every deploy, each only when no row with its key is there. A row an operator changed keeps
 * the change across deploys; a row the seed gained is added. CAP runs this file after each schema
 * deploy (PostgreSQL deployer, SQLite file at start, in-memory databases): CSV files in db/data
 * would instead be written over existing rows (UPSERT) on every deploy.
 */
const SEED = join(__dirname, 'seed')

module.exports = async function seed(tx) {
  if (!existsSync(SEED)) return
  const model = tx.model ?? cds.model
  const files = readdirSync(SEED).filter(file => file.endsWith('.csv'))
  const entities = files.map(file => {
    const name = basename(file, '.csv').replace(/-/g, '.')
    const entity = model.definitions[name]
    if (!entity) throw new Error(`db/seed/${file}: no entity ${name} in the model`)
    return { file, entity }
  })
  for (const { file, entity } of inDependencyOrder(entities)) await seedFile(tx, entity, readFileSync(join(SEED, file), 'utf8'))
}

/** Inserts the file's rows whose key is not in the table yet; answers how many it inserted. */
async function seedFile(tx, entity, csv) {
  const [columns, ...rows] = cds.parse.csv(csv)
  if (!rows.length) return 0
  const keys = Object.keys(entity.keys).filter(key => !entity.keys[key].isAssociation)
  const positions = keys.map(key => columns.indexOf(key))
  if (positions.includes(-1)) throw new Error(`the seed of ${entity.name} must give its key (${keys.join(', ')})`)
  const keyOf = values => JSON.stringify(values.map(String))
  const present = new Set((await tx.run(SELECT.from(entity).columns(...keys))).map(row => keyOf(keys.map(key => row[key]))))
  const missing = rows.filter(row => !present.has(keyOf(positions.map(position => row[position]))))
  if (missing.length) await tx.run(INSERT.into(entity).columns(...columns).rows(missing))
  return missing.length
}

/** Entities whose associations point at other seeded entities come after those (packs after plans). */
function inDependencyOrder(entities) {
  const names = new Set(entities.map(({ entity }) => entity.name))
  const targetsOf = entity => Object.values(entity.elements)
    .filter(element => element.isAssociation && !element.is2many && names.has(element.target) && element.target !== entity.name)
    .map(element => element.target)
  const ordered = []
  const done = new Set()
  while (ordered.length < entities.length) {
    const next = entities.find(({ entity }) => !done.has(entity.name) && targetsOf(entity).every(target => done.has(target)))
    if (!next) throw new Error('the seed entities refer to each other in a cycle')
    ordered.push(next)
    done.add(next.entity.name)
  }
  return ordered
}
