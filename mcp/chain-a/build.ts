import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { z } from 'zod'
import type { GatewayClient } from '../gateway-client.ts'
import { CREATES, jsonArgument, jsonText, register } from '../tools.ts'
import { address, txHash } from './read.ts'

/**
 * The build tools: unsigned chain-A transactions from the transaction service (chaina-transaction).
 * A build selects the sender's inputs, balances, sets the fee and a validity interval, and reserves
 * its inputs for the caller until it is submitted or expires. Nothing is signed here.
 */

const SERVICE = 'chaina-transaction'

const lovelaceAmount = (description: string) => z.string().regex(/^\d{1,20}$/, 'lovelace as an integer string, e.g. "5000000" for 5 ADA').describe(description)
const builder = z.enum(['csl', 'buildooor']).optional().describe('The builder backend: csl (cardano-serialization-lib) or buildooor; the gateway\'s default (csl) when left out')
const changeAddress = address('Where the change goes (bech32); the sender when left out').optional()
/** A JSON parameter: the value itself, or its JSON text. */
const json = (description: string) => z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).describe(description)
const plutusData = (description: string) => json(`${description}, as PlutusData in cardano-cli's detailed JSON schema: {"int":42}, {"bytes":"cafe"}, {"list":[…]}, {"map":[{"k":…,"v":…}]}, {"constructor":0,"fields":[…]}; the value or its JSON text`)

const buildShape = {
  ID: z.string().describe('The buildId: give it to create_signing_request'),
  status: z.string().describe('built (waiting to be signed), then signing, submitted, confirmed; or failed, cancelled, expired'),
  kind: z.string(),
  network: z.string().nullable().describe('The network it is built for (devnet, preprod, preview, mainnet)'),
  txHash: z.string().describe('The transaction id (hash of the body); signing does not change it'),
  fee: z.string().describe('The fee in lovelace, an integer string'),
  unsignedTxCbor: z.string().describe('The unsigned transaction, CBOR hex'),
  expiresAt: z.string().nullable().describe('When its validity interval ends: it must be submitted before'),
  next: z.string().describe('What to do next'),
}

type Build = Record<string, unknown> & { ID: string; expiresAt?: string | null }

/** The build as answered, and the next step of the flow. */
function withNext(build: Build) {
  const by = build.expiresAt ? ` before it expires at ${build.expiresAt}` : ''
  return { ...build, next: `Call create_signing_request with buildId ${build.ID} to have it signed, then submit it${by}.` }
}

/**
 * JSON text for an OData JSON parameter: text is checked to be JSON before any call and passed on as
 * it is (parsing and printing it again would round integers beyond 2^53, which PlutusData allows).
 */
function jsonParameter(name: string, value: unknown) {
  jsonArgument(name, value)
  return jsonText(value)
}

/** Registers build_ada_transfer, build_mint_transaction and build_plutus_spend. */
export function registerBuildTools(server: McpServer, client: GatewayClient) {
  register(server, client, {
    name: 'build_ada_transfer',
    title: 'Build an ADA transfer',
    description: 'Builds an unsigned chain-A transaction sending lovelaceAmount from senderAddress to recipientAddress (inputs selected from the sender, fee and change computed); with datumJson the output carries that inline datum, which is how funds are locked at a Plutus script address for build_plutus_spend. Costs a build (10 units on the hosted gateway). Answers the build (ID, txHash, fee, unsignedTxCbor, expiresAt); next: create_signing_request with its ID.',
    input: {
      senderAddress: address('The paying address (bech32, addr_test1… or addr1…): its unspent outputs are spent and its key must sign'),
      recipientAddress: address('The receiving address (bech32); a script address to lock funds'),
      lovelaceAmount: lovelaceAmount('The amount in lovelace as an integer string (1 ADA = "1000000"); at least the minimum UTxO value (about 1 ADA)'),
      changeAddress,
      datumJson: plutusData('An inline datum for the recipient\'s output (to lock funds at a script)').optional(),
      builder,
    },
    output: buildShape,
    annotations: CREATES,
    async run({ datumJson, ...args }, calls) {
      return withNext(await calls.action<Build>(SERVICE, 'BuildSimpleAdaTransaction', { ...args, datumJson: jsonParameter('datumJson', datumJson) }))
    },
  })

  register(server, client, {
    name: 'build_mint_transaction',
    title: 'Build a native-token mint',
    description: 'Builds an unsigned chain-A transaction that mints (or, with negative quantities, burns) native tokens under a native-script policy; the minted tokens go to recipientAddress (the sender when left out) with the minimum ADA, and metadataJson can carry CIP-25 metadata under label 721. The policy\'s key (e.g. the sender\'s payment key in {"type":"sig","keyHash":…}) signs with the sender. Costs a build (10 units) and one read for `minted` (the units to give get_asset_info once it is confirmed). Next: create_signing_request with its ID.',
    input: {
      senderAddress: address('The paying address (bech32): pays the fee and the minimum ADA, its key signs'),
      mintActionsJson: json('What to mint: an array of {"assetName":"<UTF-8 name>" or "assetNameHex":"<hex>", "quantity":"<integer string>"}, negative quantities burn; the value or its JSON text, e.g. [{"assetName":"Coin","quantity":"1000"}]'),
      mintingPolicyScript: z.union([z.string(), z.looseObject({ type: z.string() })]).describe('The minting policy: a native script as cardano-cli writes it, e.g. {"type":"sig","keyHash":"<56 hex payment key hash>"} or {"type":"all","scripts":[{"type":"sig",…},{"type":"before","slot":N}]} (sig, before, after, all, any, atLeast), the object or its JSON text, or the script\'s CBOR hex'),
      recipientAddress: address('Who receives the minted tokens (bech32); the sender when left out').optional(),
      metadataJson: json('Transaction metadata by label, e.g. CIP-25 {"721":{"<policy id>":{"<asset name>":{"name":…,"image":…}}}}; the value or its JSON text').optional(),
      lovelaceAmount: lovelaceAmount('Lovelace to send with the tokens, an integer string; the minimum UTxO value when left out').optional(),
      changeAddress,
      builder,
    },
    output: {
      ...buildShape,
      minted: z.array(z.looseObject({ unit: z.string(), quantity: z.string() })).describe('The assets minted (positive) or burned (negative): unit (policy id + asset name hex), policyId, assetName, fingerprint'),
    },
    annotations: CREATES,
    async run({ mintActionsJson, mintingPolicyScript, metadataJson, ...args }, calls) {
      const build = await calls.action<Build>(SERVICE, 'BuildTokenMintTransaction', {
        ...args,
        mintActionsJson: jsonParameter('mintActionsJson', mintActionsJson),
        mintingPolicyScript: jsonText(mintingPolicyScript),
        metadataJson: jsonParameter('metadataJson', metadataJson),
      })
      const { value: assets } = await calls.read<{ value: Record<string, unknown>[] }>(SERVICE, 'BuildAssets', {
        filter: `build_ID eq ${build.ID} and role eq 'mint'`, select: 'unit,policyId,assetNameHex,assetName,fingerprint,quantity', orderby: 'unit',
      })
      return { ...withNext(build), minted: assets.map(({ build_ID: _b, role: _r, position: _p, ...asset }) => asset) }
    },
  })

  register(server, client, {
    name: 'build_plutus_spend',
    title: 'Build a Plutus script spend',
    description: 'Builds an unsigned chain-A transaction that spends an output locked at a Plutus V3 script address (scriptTxHash#scriptOutputIndex) with a redeemer: the script runs in the build (a script that fails answers SCRIPT_FAILED with its trace), execution units are evaluated and collateral is selected from the sender, who pays and signs. The unlocked value goes to recipientAddress, else to the change address. Costs a build (10 units). Next: create_signing_request with its ID.',
    input: {
      senderAddress: address('The address that pays the fee and the collateral (bech32); its key signs'),
      validatorScript: z.string().regex(/^([0-9a-fA-F]{2})+$/, 'the script as CBOR hex').describe('The Plutus V3 validator as CBOR hex (the cborHex of cardano-cli\'s PlutusScriptV3 text envelope); its hash must be the script that locks the output'),
      scriptTxHash: txHash('The transaction that created the locked output (64 hex)'),
      scriptOutputIndex: z.number().int().min(0).max(65535).describe('The index of the locked output in that transaction (get_utxos of the script address shows it)'),
      redeemerJson: plutusData('The redeemer handed to the validator'),
      datumJson: plutusData('The datum, needed only when the output carries a datum hash instead of an inline datum').optional(),
      recipientAddress: address('Who receives the unlocked value (bech32); the change address when left out').optional(),
      lovelaceAmount: lovelaceAmount('With recipientAddress: lovelace to send there, an integer string').optional(),
      changeAddress,
      builder,
    },
    output: buildShape,
    annotations: CREATES,
    async run({ redeemerJson, datumJson, ...args }, calls) {
      return withNext(await calls.action<Build>(SERVICE, 'BuildPlutusSpendTransaction', {
        ...args,
        redeemerJson: jsonParameter('redeemerJson', redeemerJson),
        datumJson: jsonParameter('datumJson', datumJson),
      }))
    },
  })
}
