#!/usr/bin/env node
require('./launch.cjs')('chain-a/server.ts')
