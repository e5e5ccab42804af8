import cds from '@sap/cds'
import { describeVerifyLane, UNLIMITED } from './lane.ts'

/** The verify lane self-hosted (no gateway in front): anyone may call it, nothing speaks of units. */

process.env.CHAIN_B_JOBS_POLL_MS = '20'
Object.assign(process.env, UNLIMITED)
const app: { url: string } = cds.test(__dirname + '/../..') as any

afterAll(() => {
  for (const name of ['CHAIN_B_JOBS_POLL_MS', ...Object.keys(UNLIMITED)]) delete process.env[name]
})

describeVerifyLane({
  app,
  hosted: false,
  // A mocked user of the test profile anchors and attests; the lane itself is asked without credentials.
  ownerHeaders: async () => ({ authorization: `Basic ${Buffer.from('alice:').toString('base64')}` }),
})
