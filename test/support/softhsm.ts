import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import * as pkcs11js from 'pkcs11js'
import { CKK_EC_EDWARDS, CKM_EC_EDWARDS_KEY_PAIR_GEN, ed25519Point } from '../../srv/chains/chain-a/signing/hsm.ts'
import { defaultExport } from '../../srv/lib/interop.ts'

/**
 * A private SoftHSM2 token for tests: its own configuration and token directory in the temp
 * directory, initialised with softhsm2-util. Ed25519 keys are generated inside
 * the token, the private half sensitive and not extractable, like an administrator would on an HSM.
 */

export const SOFTHSM_MODULE = '/usr/lib/softhsm/libsofthsm2.so'

const pkcs11 = defaultExport<typeof pkcs11js>(pkcs11js)
const ED25519_PARAMS = Buffer.from('06032b6570', 'hex') // OID 1.3.101.112

export interface SoftHsmToken {
  dir: string
  tokenLabel: string
  pin: string
  /** The slot id SoftHSM assigned to the token (decimal). */
  slotId: string
  /** Removes the configuration and token directory. */
  cleanup(): void
}

export function createSoftHsmToken(tokenLabel = 'signing-test', pin = '246810', soPin = '13579135'): SoftHsmToken {
  const confPath = configPathOfProcess()
  const dir = dirname(confPath)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(join(dir, 'tokens'), { recursive: true })
  writeFileSync(confPath, `directories.tokendir = ${join(dir, 'tokens')}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`)
  const output = execFileSync('softhsm2-util', ['--init-token', '--free', '--label', tokenLabel, '--so-pin', soPin, '--pin', pin],
    { encoding: 'utf8', env: { ...process.env, SOFTHSM2_CONF: confPath } })
  const slotId = /reassigned to slot (\d+)/.exec(output)?.[1]
  if (!slotId) throw new Error(`softhsm2-util did not say which slot holds the token: ${output}`)
  return { dir, tokenLabel, pin, slotId, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * SoftHSM reads SOFTHSM2_CONF from the process environment when the module initialises. Jest gives
 * each test file a copy of process.env, so the real environment is set with process.loadEnvFile,
 * which never replaces a variable: the configuration path is therefore one per process.
 */
function configPathOfProcess(): string {
  const confPath = join(tmpdir(), `softhsm-test-${process.pid}`, 'softhsm2.conf')
  const current = process.env.SOFTHSM2_CONF
  if (current !== undefined && current !== confPath) throw new Error(`SOFTHSM2_CONF is set (${current}); unset it so the tests use a private SoftHSM token`)
  const envFile = join(tmpdir(), `softhsm-test-${process.pid}.env`)
  writeFileSync(envFile, `SOFTHSM2_CONF=${confPath}\n`)
  try {
    process.loadEnvFile(envFile)
  } finally {
    rmSync(envFile, { force: true })
  }
  process.env.SOFTHSM2_CONF = confPath
  // A child inherits the real environment: proof that the module will not use the system's tokens.
  const seen = execFileSync('sh', ['-c', 'printf %s "$SOFTHSM2_CONF"'], { encoding: 'utf8' })
  if (seen !== confPath) throw new Error(`the process environment's SOFTHSM2_CONF is '${seen}', not the test token's ${confPath}`)
  return confPath
}

/**
 * Generates an Ed25519 key pair in the token (CKM_EC_EDWARDS_KEY_PAIR_GEN); answers the raw public
 * key. `canSign: false` makes a private key the token refuses to sign with.
 */
export function generateEd25519KeyPair(token: SoftHsmToken, label: string, id: string, { canSign = true } = {}): Buffer {
  return withUserSession(token, (lib, session) => {
    const common = [
      { type: pkcs11.CKA_TOKEN, value: true },
      { type: pkcs11.CKA_LABEL, value: label },
      { type: pkcs11.CKA_ID, value: Buffer.from(id, 'hex') },
    ]
    const { publicKey } = lib.C_GenerateKeyPair(session, { mechanism: CKM_EC_EDWARDS_KEY_PAIR_GEN },
      [...common, { type: pkcs11.CKA_EC_PARAMS, value: ED25519_PARAMS }, { type: pkcs11.CKA_VERIFY, value: true }],
      [...common, { type: pkcs11.CKA_PRIVATE, value: true }, { type: pkcs11.CKA_SIGN, value: canSign }, { type: pkcs11.CKA_SENSITIVE, value: true }, { type: pkcs11.CKA_EXTRACTABLE, value: false }])
    const [point] = lib.C_GetAttributeValue(session, publicKey, [{ type: pkcs11.CKA_EC_POINT }])
    return Buffer.from(ed25519Point(point.value)!)
  })
}

/** What the token says about a private key: its protection flags, and whether its value can be read. */
export function inspectPrivateKey(token: SoftHsmToken, label: string): { keyType: number; sensitive: boolean; extractable: boolean; valueReadable: boolean } {
  return withUserSession(token, (lib, session) => {
    lib.C_FindObjectsInit(session, [{ type: pkcs11.CKA_CLASS, value: pkcs11.CKO_PRIVATE_KEY }, { type: pkcs11.CKA_LABEL, value: label }])
    const [key] = lib.C_FindObjects(session, 1)
    lib.C_FindObjectsFinal(session)
    const [keyType, sensitive, extractable] = lib.C_GetAttributeValue(session, key, [
      { type: pkcs11.CKA_KEY_TYPE }, { type: pkcs11.CKA_SENSITIVE }, { type: pkcs11.CKA_EXTRACTABLE },
    ])
    let valueReadable = true
    try {
      lib.C_GetAttributeValue(session, key, [{ type: pkcs11.CKA_VALUE }])
    } catch {
      valueReadable = false
    }
    return { keyType: Number(keyType.value.length === 8 ? keyType.value.readBigUInt64LE(0) : keyType.value.readUInt32LE(0)), sensitive: sensitive.value[0] === 1, extractable: extractable.value[0] === 1, valueReadable }
  })
}

export { CKK_EC_EDWARDS }

/** Runs `work` in a logged-in read-write session, then finalises the module again. */
function withUserSession<T>(token: SoftHsmToken, work: (lib: pkcs11js.PKCS11, session: Buffer) => T): T {
  const lib = new pkcs11.PKCS11()
  lib.load(SOFTHSM_MODULE)
  lib.C_Initialize()
  try {
    const slot = lib.C_GetSlotList(true).find(handle => handle.readBigUInt64LE(0) === BigInt(token.slotId))!
    const session = lib.C_OpenSession(slot, pkcs11.CKF_SERIAL_SESSION | pkcs11.CKF_RW_SESSION)
    lib.C_Login(session, pkcs11.CKU_USER, token.pin)
    try {
      return work(lib, session)
    } finally {
      lib.C_Logout(session)
      lib.C_CloseSession(session)
    }
  } finally {
    lib.C_Finalize()
    lib.close()
  }
}
