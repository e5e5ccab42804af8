const cds = require('@sap/cds')
const { createHash } = require('node:crypto')

/**
 * The schema deployer: the database service `cds.requires.db` (PostgreSQL in production, from its
 * binding) gets the model's schema, then the seed rows (db/init.js). What CAP's own `cds-deploy`
 * does, without its first line, which prints the database options, password included; this logs
 * the target by host and database only.
 *
 * A change CAP's schema evolution refuses (a dropped element or entity, a shorter string, an
 * incompatible type: docs/schema-changes.md) takes two explicit steps instead:
 *   node db/deploy.js --script          prints CAP's migration script from the deployed model
 *                                       (table cds_model) to this one, lossy statements marked,
 *                                       and its digest; executes nothing
 *   node db/deploy.js --apply <digest>  applies that script, if it is still the one with this
 *                                       digest, and records the model, in one transaction; then
 *                                       deploys as usual (nothing left to change, the seed rows)
 */
async function main(args) {
  await cds.plugins
  const db = await cds.connect.to('db')
  const { host, hostname, port, database } = db.options?.credentials ?? {}
  const target = `${db.options?.kind} ${host ?? hostname ?? ''}${port ? `:${port}` : ''}${database ? `/${database}` : ''}`.trim()
  const [mode, digest] = args
  if (mode === '--script') {
    console.error(`the migration script for ${target}, from its deployed model to this one; nothing is executed`)
    return console.log(render(await migrationScript(db, await projectModel())))
  }
  if (mode === '--apply') {
    console.log(`applying the migration script ${digest ?? '(no digest given)'} to ${target}`)
    const script = await applyScript(db, await projectModel(), digest)
    console.log(`applied ${script.statements.length} statements; the deployed model is recorded`)
  } else if (mode) {
    throw new Error(`unknown option ${mode}: the deployer takes none, --script or --apply <digest>`)
  }
  console.log(`deploying the schema to ${target}`)
  await cds.deploy('*').to(db).catch(error => {
    if (isRefusedChange(error)) console.error('the model changes the deployed schema in a way schema evolution refuses: see docs/schema-changes.md (node db/deploy.js --script)')
    throw error
  })
}

const isRefusedChange = error => error?.messages?.some?.(message => /^migration-unsupported/.test(message.messageId))

/** The model as `cds.deploy('*')` deploys it. */
async function projectModel() {
  return cds.minify(await cds.load('*'))
}

/**
 * CAP's migration script (`cds deploy --script`) from the model recorded in the database's
 * cds_model table to the given one: every statement, the lossy ones preceded by
 * `-- [WARNING] this statement is lossy`. The digest names exactly these statements.
 */
async function migrationScript(db, model) {
  cds.deploy.exclude_external_entities_in(model)
  const options = { ...db.options, dialect: db.options.dialect ?? db.options.kind, script: true, dry: true, messages: [] }
  const { afterImage, drops, createsAndAlters } = cds.compile.to.sql.delta(model, options, await deployedModel(db))
  const statements = [...drops, ...createsAndAlters]
  const warnings = options.messages.filter(message => message.severity === 'Warning').map(String)
  return { statements, warnings, afterImage, digest: digestOf(statements) }
}

/**
 * Applies the migration script whose digest the operator reviewed, and records the model it leads
 * to, in one transaction: a script that changed since (another model, another deployed state)
 * applies nothing.
 */
async function applyScript(db, model, digest) {
  return db.run(async tx => {
    const script = await migrationScript(tx, model)
    if (!digest || digest !== script.digest) {
      throw new Error(`the migration script's digest is ${script.digest}, not ${digest ?? '(none)'}: review it again (node db/deploy.js --script) and apply that digest`)
    }
    for (const statement of script.statements) await tx.run(statement)
    await recordModel(tx, script.afterImage)
    return script
  })
}

/** The model of the last deploy (CAP's table cds_model), undefined before the first one. */
async function deployedModel(db) {
  if (!(await hasModelTable(db))) return undefined
  const [row] = await db.run('SELECT csn FROM cds_model')
  return row?.csn ? JSON.parse(row.csn) : undefined
}

const hasModelTable = async db => (await db.run(db.options.kind === 'sqlite'
  ? 'SELECT 1 FROM sqlite_schema WHERE name = \'cds_model\''
  : 'SELECT 1 FROM pg_tables WHERE tablename = \'cds_model\' AND schemaname = current_schema()')).length > 0

/** What CAP's deploy writes after applying a delta, so that the next deploy starts from this model. */
async function recordModel(db, afterImage) {
  const csn = JSON.stringify(afterImage)
  const [type, placeholder] = db.options.kind === 'sqlite' ? ['CLOB', '?'] : ['text', '$1']
  if (!(await hasModelTable(db))) {
    await db.run(`CREATE TABLE cds_model (csn ${type})`)
    await db.run(`INSERT INTO cds_model VALUES (${placeholder})`, [csn])
  } else {
    await db.run(`UPDATE cds_model SET csn = ${placeholder}`, [csn])
  }
}

const digestOf = statements => createHash('sha256').update(statements.join('\n')).digest('hex').slice(0, 16)

function render({ statements, warnings, digest }) {
  return [
    ...warnings.map(warning => `-- ${warning}`),
    statements.length ? statements.join('\n\n') : '-- no changes: the deployed schema is this model\'s',
    `\n-- digest ${digest}: after review, apply exactly these statements with node db/deploy.js --apply ${digest}`,
  ].join('\n')
}

module.exports = { migrationScript, applyScript, deployedModel }

if (require.main === module) {
  main(process.argv.slice(2))
    .catch(error => {
      console.error(error)
      process.exitCode = 1
    })
    .finally(() => cds.db?.disconnect?.())
}
