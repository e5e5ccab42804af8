import { parseArgs } from 'node:util'
import { CliError, productionReason, type ChainCommands } from './shared/cli.ts'
import { DevnetStateError } from './shared/state.ts'

/**
 * `npm run devnet -- [--chain a|b] <command>`: the command line of both devnets. `--chain b` (or
 * `--chain=b`), anywhere among the arguments, picks chain B's commands; chain A's otherwise.
 * Every command but help refuses to run in production.
 */

async function main(args: string[]) {
  const { chain, rest } = chainNamed(args)
  const commands = await commandsOf(chain)
  await run(commands, rest).catch(error => report(error, commands))
}

/** The chain `--chain` names (a without it), and the other arguments. */
function chainNamed(args: string[]): { chain: string | undefined; rest: string[] } {
  const { tokens } = parseArgs({ args, options: { chain: { type: 'string' } }, strict: false, allowPositionals: true, tokens: true })
  const option = tokens.find(token => token.kind === 'option' && token.name === 'chain' && token.rawName === '--chain')
  if (!option || option.kind !== 'option') return { chain: 'a', rest: args }
  const taken = option.inlineValue === false ? 2 : 1
  return { chain: option.value, rest: args.filter((_, i) => i < option.index || i >= option.index + taken) }
}

async function commandsOf(chain: string | undefined): Promise<ChainCommands> {
  if (chain === 'a') return (await import('./chain-a/commands.ts')).chainA
  if (chain === 'b') return (await import('./chain-b/commands.ts')).chainB
  throw new CliError(`Unknown chain '${chain ?? ''}'; --chain takes a or b.`, 2)
}

async function run(chain: ChainCommands, args: string[]) {
  const [command = 'serve', ...rest] = args
  if (['help', '--help', '-h'].includes(command)) {
    console.log(chain.usage)
    return
  }
  const refusal = productionReason(process.env)
  if (refusal) throw new CliError(chain.refusal(refusal))
  const perform = Object.hasOwn(chain.commands, command) ? chain.commands[command] : undefined
  if (!perform) throw new CliError(`Unknown command '${command}'; \`${chain.help}\` lists the commands.`, 2)
  await perform(rest)
}

/** One line for what the user can act on; a stack only for what is a defect. */
function report(error: unknown, chain?: ChainCommands): never {
  if (error instanceof CliError) {
    console.error(error.message)
    process.exit(error.exitCode)
  }
  if (error instanceof DevnetStateError || chain?.isUserError?.(error)) {
    console.error(error.message)
    process.exit(1)
  }
  if (chain && (error as NodeJS.ErrnoException)?.code === 'EADDRINUSE') {
    console.error(`The ${chain.chain} devnet cannot listen: ${(error as Error).message}; set PORT to a free port.`)
    process.exit(1)
  }
  console.error(error)
  process.exit(1)
}

if (/devnet[\\/]cli\.[jt]s$/.test(process.argv[1] ?? '')) main(process.argv.slice(2)).catch(report)
