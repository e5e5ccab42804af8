// CAP loads this plugin before the project's bootstrap (srv/server.ts). It puts a request's way
// through the server in place when a server is served (cds serve, cds-serve, cds.test), and does
// nothing for the other commands (cds-typer, cds deploy, cds build), which load plugins too.
const cds = require('@sap/cds')

if (cds.cli?.command === 'serve') require('./pipeline.ts').installRequestPipeline()
