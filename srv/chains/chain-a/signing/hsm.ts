import * as CSL from '@emurgo/cardano-serialization-lib-nodejs'
import * as pkcs11js from 'pkcs11js'
import { ApiError } from '../../../lib/errors.ts'
import { defaultExport } from '../../../lib/interop.ts'
import type { OptionValue } from '../../../lib/requires-options.ts'
import { optionalValue } from '../../../lib/settings.ts'
import { addVkeyWitnesses, messageOf, parseTransaction, type SignedTransaction } from './witnesses.ts'

/**
 * Server-side signing with an Ed25519 key held in a PKCS#11 token (an HSM, or SoftHSM in
 * development). The private key never leaves the token: the signer finds it by label and/or id,
 * reads only the public key object's CKA_EC_POINT, and has the token sign the 32-byte body hash
 * with CKM_EDDSA. The user PIN is read from the environment variable the configuration names,
 * never from a file or a request.
 */

type Pkcs11Module = typeof pkcs11js
const pkcs11 = defaultExport<Pkcs11Module>(pkcs11js)

/** Not all of these are among pkcs11js's constants (PKCS#11 3.0 values). */
export const CKK_EC_EDWARDS = 0x40
export const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055
const CKM_EDDSA = 0x1057

/** A slot by its position among the slots with a token, or by its PKCS#11 slot id. */
export type HsmSlot = { index: number } | { id: number | string }

export interface HsmConfig {
  /** Path of the PKCS#11 module, e.g. /usr/lib/softhsm/libsofthsm2.so. */
  modulePath: string
  slot: HsmSlot
  keyLabel?: string
  /** CKA_ID of the key pair, hex. */
  keyId?: string
  /** The role a user must hold to sign with the key. */
  requiredRole: string
  /** Name of the environment variable that holds the user PIN. */
  pinEnv: string
}

interface HsmStatus {
  configured: boolean
  connected: boolean
  keyLabel?: string
  keyId?: string
  publicKeyHash?: string
  /** The key's enterprise address on the network asked for. */
  address?: string
  error?: { code: string; message: string }
}

type Env = Record<string, string | undefined>

/**
 * `cds.requires['chain-a'].hsm` as configured, the documented HSM_* variables laid over it
 * (srv/chaina-sign/hsm-settings.ts): values as text from the environment, typed from package.json.
 * The PIN is not among them: the configuration names the variable that holds it (`pinEnv`).
 */
export interface HsmOptions {
  /** HSM_PKCS11_MODULE */
  pkcs11Module?: OptionValue
  /** HSM_SLOT: the slot's index among the slots with a token. */
  slot?: OptionValue
  /** HSM_SLOT_ID: the PKCS#11 slot id, instead of an index. */
  slotId?: OptionValue
  /** HSM_KEY_LABEL */
  keyLabel?: OptionValue
  /** HSM_KEY_ID */
  keyId?: OptionValue
  /** HSM_REQUIRES_ROLE */
  requiresRole?: OptionValue
  /** HSM_PIN_ENV: the environment variable that holds the PIN (default HSM_PIN). */
  pinEnv?: OptionValue
  /** HSM_LABEL: the name HsmConfigurations shows (default `default`). */
  label?: OptionValue
}

/**
 * The HSM configuration from its options; undefined when no module is configured. Without a role
 * or a key selector the configuration is refused (fail closed).
 */
export function resolveHsmConfig(options: HsmOptions): HsmConfig | undefined {
  const read = (key: keyof HsmOptions) => optionalValue(options[key])
  const modulePath = read('pkcs11Module')
  if (!modulePath) return undefined
  const slotId = read('slotId')
  const slotIndex = Number(read('slot') ?? 0)
  const requiredRole = read('requiresRole')
  const keyLabel = read('keyLabel')
  const keyId = read('keyId')
  if (!requiredRole) throw notConfigured('HSM_REQUIRES_ROLE must name the role that may sign with the HSM key')
  if (!keyLabel && !keyId) throw notConfigured('HSM_KEY_LABEL or HSM_KEY_ID must select the HSM key')
  if (!slotId && !(Number.isInteger(slotIndex) && slotIndex >= 0)) throw notConfigured('HSM_SLOT must be a slot index (0, 1, …)')
  return {
    modulePath,
    slot: slotId ? { id: slotId } : { index: slotIndex },
    requiredRole,
    pinEnv: read('pinEnv') ?? 'HSM_PIN',
    ...(keyLabel ? { keyLabel } : {}),
    ...(keyId ? { keyId } : {}),
  }
}

interface Connection {
  lib: pkcs11js.PKCS11
  modulePath: string
  session: pkcs11js.Handle
  privateKey: pkcs11js.Handle
  publicKey: CSL.PublicKey
}

export class HsmSigner {
  private readonly config: HsmConfig | undefined
  private readonly env: Env
  private connection: Connection | undefined
  private queue: Promise<unknown> = Promise.resolve()

  /** `env` is where the PIN variable is read (the process environment unless given). */
  constructor(config: HsmConfig | undefined, env: Env = process.env) {
    this.config = config
    this.env = env
  }

  /** Whether a user may sign with the key; `hasRole` is the caller's role check (e.g. `req.user.is`). */
  mayUse(hasRole: (role: string) => boolean): boolean {
    return this.config !== undefined && hasRole(this.config.requiredRole)
  }

  assertMayUse(hasRole: (role: string) => boolean): void {
    if (!this.config) throw notConfigured('no HSM is configured')
    if (!hasRole(this.config.requiredRole)) throw new ApiError(403, 'HSM_FORBIDDEN', `signing with the HSM key needs the role '${this.config.requiredRole}'`)
  }

  /** Connects if needed; answers the failure as `error` instead of throwing. */
  status(networkId: number): HsmStatus {
    const selector = { ...(this.config?.keyLabel ? { keyLabel: this.config.keyLabel } : {}), ...(this.config?.keyId ? { keyId: this.config.keyId } : {}) }
    try {
      const publicKey = this.connect().publicKey
      return { configured: true, connected: true, ...selector, publicKeyHash: publicKey.hash().to_hex(), address: enterpriseAddress(publicKey, networkId) }
    } catch (error) {
      const { code, message } = error instanceof ApiError ? error : unavailable(messageOf(error))
      return { configured: code !== 'HSM_NOT_CONFIGURED', connected: false, ...selector, error: { code, message } }
    }
  }

  /** The key's public key (connects if needed). */
  publicKey(): CSL.PublicKey {
    return this.connect().publicKey
  }

  /** The unsigned transaction signed by the HSM key, its witness merged into the original bytes. */
  async sign(unsignedTxHex: string): Promise<SignedTransaction> {
    if (!this.config) throw notConfigured('no HSM is configured')
    const bodyHash = parseTransaction(unsignedTxHex).transaction_hash().to_bytes()
    return addVkeyWitnesses(unsignedTxHex, [await this.witness(bodyHash)])
  }

  /** A vkey witness over a 32-byte transaction body hash. */
  async witness(bodyHash: Uint8Array): Promise<CSL.Vkeywitness> {
    if (bodyHash.length !== 32) throw new ApiError(400, 'HSM_SIGNING_FAILED', 'the HSM signs 32-byte transaction body hashes only')
    return this.exclusive(async () => {
      const { lib, session, privateKey, publicKey } = this.connect()
      let signature: Buffer
      try {
        lib.C_SignInit(session, { mechanism: CKM_EDDSA }, privateKey)
        signature = await lib.C_SignAsync(session, Buffer.from(bodyHash), Buffer.alloc(64))
      } catch (error) {
        this.disconnect()
        throw signingFailed(`the token could not sign: ${messageOf(error)}`)
      }
      const ed25519 = attempt(() => CSL.Ed25519Signature.from_bytes(signature))
      if (!ed25519 || !publicKey.verify(bodyHash, ed25519)) throw signingFailed('the token\'s signature does not verify with the key\'s public key')
      return CSL.Vkeywitness.new(CSL.Vkey.new(publicKey), ed25519)
    })
  }

  /** Closes the session (after a signing in progress) and lets go of the module. */
  close(): Promise<void> {
    return this.exclusive(async () => this.disconnect())
  }

  /** One token operation at a time: a PKCS#11 session runs one signing operation at once. */
  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const result = this.queue.then(task)
    this.queue = result.catch(() => undefined)
    return result
  }

  private connect(): Connection {
    if (this.connection) return this.connection
    const config = this.config
    if (!config) throw notConfigured('no HSM is configured')
    const pin = this.env[config.pinEnv]
    if (!pin) throw new ApiError(503, 'HSM_PIN_MISSING', `the HSM user PIN is not set (environment variable ${config.pinEnv})`)
    const lib = acquireModule(config.modulePath)
    let session: pkcs11js.Handle | undefined
    try {
      session = lib.C_OpenSession(findSlot(lib, config.slot), pkcs11.CKF_SERIAL_SESSION)
      login(lib, session, pin)
      const { privateKey, publicKey } = findKeyPair(lib, session, config)
      this.connection = { lib, modulePath: config.modulePath, session, privateKey, publicKey }
      return this.connection
    } catch (error) {
      if (session) quietly(() => lib.C_CloseSession(session!))
      releaseModule(config.modulePath)
      throw error instanceof ApiError ? error : unavailable(messageOf(error))
    }
  }

  /** Closing the application's last session on the token also logs the user out (PKCS#11). */
  private disconnect() {
    const connection = this.connection
    this.connection = undefined
    if (!connection) return
    quietly(() => connection.lib.C_CloseSession(connection.session))
    releaseModule(connection.modulePath)
  }
}

export function enterpriseAddress(publicKey: CSL.PublicKey, networkId: number): string {
  return CSL.EnterpriseAddress.new(networkId, CSL.Credential.from_keyhash(publicKey.hash())).to_address().to_bech32()
}

/**
 * A module is initialised once per process, and finalising it ends every session in the process:
 * signers share it, and the last one to let go finalises it.
 */
const loadedModules = new Map<string, { lib: pkcs11js.PKCS11; users: number }>()

function acquireModule(modulePath: string): pkcs11js.PKCS11 {
  const loaded = loadedModules.get(modulePath) ?? { lib: openModule(modulePath), users: 0 }
  loaded.users++
  loadedModules.set(modulePath, loaded)
  return loaded.lib
}

function releaseModule(modulePath: string) {
  const loaded = loadedModules.get(modulePath)
  if (!loaded || --loaded.users > 0) return
  loadedModules.delete(modulePath)
  quietly(() => loaded.lib.C_Finalize())
  quietly(() => loaded.lib.close())
}

function openModule(modulePath: string): pkcs11js.PKCS11 {
  const lib = new pkcs11.PKCS11()
  try {
    lib.load(modulePath)
  } catch (error) {
    throw unavailable(`cannot load the PKCS#11 module ${modulePath}: ${messageOf(error)}`)
  }
  try {
    lib.C_Initialize()
  } catch (error) {
    if (!isPkcs11Error(error, pkcs11.CKR_CRYPTOKI_ALREADY_INITIALIZED)) {
      quietly(() => lib.close())
      throw unavailable(`the PKCS#11 module did not initialise: ${messageOf(error)}`)
    }
  }
  return lib
}

function findSlot(lib: pkcs11js.PKCS11, slot: HsmSlot): pkcs11js.Handle {
  const slots = lib.C_GetSlotList(true)
  const found = 'index' in slot ? slots[slot.index] : slots.find(handle => handleValue(handle) === BigInt(slot.id))
  if (!found) throw unavailable(`no token in slot ${'index' in slot ? `index ${slot.index}` : `id ${slot.id}`} (${slots.length} slots have a token)`)
  return found
}

const handleValue = (handle: Buffer) => (handle.length >= 8 ? handle.readBigUInt64LE(0) : BigInt(handle.readUInt32LE(0)))

function login(lib: pkcs11js.PKCS11, session: pkcs11js.Handle, pin: string) {
  try {
    lib.C_Login(session, pkcs11.CKU_USER, pin)
  } catch (error) {
    // Login state is per application and token: another session may have logged in already.
    if (!isPkcs11Error(error, pkcs11.CKR_USER_ALREADY_LOGGED_IN)) throw unavailable(`the token refused the login: ${messageOf(error)}`)
  }
}

function findKeyPair(lib: pkcs11js.PKCS11, session: pkcs11js.Handle, config: HsmConfig) {
  const selector: pkcs11js.Template = [{ type: pkcs11.CKA_KEY_TYPE, value: CKK_EC_EDWARDS }]
  if (config.keyLabel) selector.push({ type: pkcs11.CKA_LABEL, value: config.keyLabel })
  if (config.keyId) selector.push({ type: pkcs11.CKA_ID, value: Buffer.from(config.keyId, 'hex') })
  const describe = [config.keyLabel && `label '${config.keyLabel}'`, config.keyId && `id ${config.keyId}`].filter(Boolean).join(' and ')
  const privateKey = findOne(lib, session, [{ type: pkcs11.CKA_CLASS, value: pkcs11.CKO_PRIVATE_KEY }, ...selector], `private Ed25519 key with ${describe}`)
  const publicObject = findOne(lib, session, [{ type: pkcs11.CKA_CLASS, value: pkcs11.CKO_PUBLIC_KEY }, ...selector], `public Ed25519 key with ${describe}`)
  const [point] = lib.C_GetAttributeValue(session, publicObject, [{ type: pkcs11.CKA_EC_POINT }])
  const raw = ed25519Point(point.value)
  if (!raw) throw keyNotFound(`the public key with ${describe} is not an Ed25519 key (CKA_EC_POINT of ${point.value.length} bytes)`)
  return { privateKey, publicKey: CSL.PublicKey.from_bytes(raw) }
}

function findOne(lib: pkcs11js.PKCS11, session: pkcs11js.Handle, template: pkcs11js.Template, what: string): pkcs11js.Handle {
  lib.C_FindObjectsInit(session, template)
  let found: pkcs11js.Handle[]
  try {
    found = lib.C_FindObjects(session, 2)
  } finally {
    lib.C_FindObjectsFinal(session)
  }
  if (found.length === 0) throw keyNotFound(`the token holds no ${what}`)
  if (found.length > 1) throw keyNotFound(`the token holds several objects matching ${what}; configure the key id as well`)
  return found[0]
}

/** The 32 key bytes of CKA_EC_POINT: a DER OCTET STRING (`04 20 <32 bytes>`) or the raw point. */
export function ed25519Point(value: Buffer): Buffer | undefined {
  if (value.length === 34 && value[0] === 0x04 && value[1] === 0x20) return value.subarray(2)
  if (value.length === 32) return value
  return undefined
}

function isPkcs11Error(error: unknown, code: number) {
  return error instanceof Error && (error as { code?: number }).code === code
}

function attempt<T>(f: () => T): T | undefined {
  try {
    return f()
  } catch {
    return undefined
  }
}

function quietly(f: () => void) {
  try {
    f()
  } catch {
    // Releasing a session or module that is already gone is not an error.
  }
}

const notConfigured = (message: string) => new ApiError(503, 'HSM_NOT_CONFIGURED', message)
const unavailable = (message: string) => new ApiError(503, 'HSM_UNAVAILABLE', message)
const keyNotFound = (message: string) => new ApiError(503, 'HSM_KEY_NOT_FOUND', message)
const signingFailed = (message: string) => new ApiError(502, 'HSM_SIGNING_FAILED', message)
