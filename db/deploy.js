const cds = require('@sap/cds')

/**
 * The schema deployer: the database service `cds.requires.db` (PostgreSQL in production, from its
 * binding) gets the model's schema, then the seed rows (db/init.js). What CAP's own `cds-deploy`
 * does, without its first line, which prints the database options, password included; this logs
 * the target by host and database only.
 */
async function deploy() {
  await cds.plugins
  const db = await cds.connect.to('db')
  const { host, hostname, port, database } = db.options?.credentials ?? {}
  console.log(`deploying the schema to ${db.options?.kind} ${host ?? hostname ?? ''}${port ? `:${port}` : ''}${database ? `/${database}` : ''}`)
  await cds.deploy('*').to(db)
}

deploy()
  .catch(error => {
    console.error(error)
    process.exitCode = 1
  })
  .finally(() => cds.db?.disconnect?.())
