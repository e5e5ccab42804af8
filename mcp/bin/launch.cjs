'use strict'
/**
 * Starts a tool server (TypeScript, run as it is) under a Node that strips types: this one when it
 * can (22.18 and later), else the Node this package brings (`npm ci` installs it), so `npx` works
 * whichever Node the MCP client finds first. stdin, stdout and stderr are the server's own.
 */
const { spawn } = require('node:child_process')
const { existsSync } = require('node:fs')
const path = require('node:path')
const { pathToFileURL } = require('node:url')

module.exports = function launch(entry) {
  const root = path.join(__dirname, '..', '..')
  const script = path.join(root, 'mcp', entry)
  if (process.features.typescript) {
    return import(pathToFileURL(script).href)
  }
  const node = path.join(root, 'node_modules', '.bin', 'node')
  if (!existsSync(node)) {
    console.error(`This Node (${process.version}) cannot run the tool server: use Node 22.18 or later, or run npm ci in ${root} first.`)
    process.exit(2)
  }
  const child = spawn(node, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', script, ...process.argv.slice(2)], { stdio: 'inherit' })
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal))
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
}
