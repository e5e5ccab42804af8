import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { APP_FILES } from '../../srv/lib/app-files.ts'

/**
 * Every file the running server reads from its own installation is where the one table says (in
 * the built application, gen/srv, test/production/build.test.ts checks them).
 */
test.each(Object.entries(APP_FILES))('%s: %s exists', (_name, path) => {
  expect(existsSync(join(resolve(__dirname, '..', '..'), path))).toBe(true)
})
