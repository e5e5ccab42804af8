// CAP loads this plugin before the project's bootstrap (srv/server.ts). It puts a request's way
// through the server in place when a server is served (cds serve, cds-serve, cds.test), and does
// nothing for the other commands (cds-typer, cds deploy, cds build), which load plugins too.
// The pipeline is TypeScript in the sources and JavaScript in the built application (gen/srv).
const cds = require('@sap/cds')
const { existsSync } = require('node:fs')

const pipeline = existsSync(`${__dirname}/pipeline.ts`) ? './pipeline.ts' : './pipeline.js'
if (cds.cli?.command === 'serve') require(pipeline).installRequestPipeline()
