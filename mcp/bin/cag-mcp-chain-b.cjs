#!/usr/bin/env node
require('./launch.cjs')('chain-b/server.ts')
