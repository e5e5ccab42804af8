import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { relative } from 'node:path'

/** A state folder that cannot be used; its message is one line that says what to do. */
export class DevnetStateError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'DevnetStateError'
  }
}

/** What a devnet says when its saved state file does not read. */
interface StateFileProblems {
  /** The file system refused (permissions, not a folder, ...). */
  io(error: NodeJS.ErrnoException): Error
  notJson(): Error
  wrongFormat(found: unknown): Error
}

/** The saved state file as a JSON object of the expected format; undefined when there is none. */
export function readStateFile(file: string, format: number, problems: StateFileProblems): Record<string, unknown> | undefined {
  if (!existsSync(file)) return undefined
  let saved: Record<string, unknown>
  try {
    saved = Object(JSON.parse(readFileSync(file, 'utf8')))
  } catch (error) {
    throw (error as NodeJS.ErrnoException).code ? problems.io(error as NodeJS.ErrnoException) : problems.notJson()
  }
  if (saved.format !== format) throw problems.wrongFormat(saved.format)
  return saved
}

/** Writes the file whole or not at all (a crash leaves the old one). */
export function writeAtomically(file: string, content: string) {
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, content)
  renameSync(temporary, file)
}

/** A path as the user would type it from the current folder. */
export function shown(path: string): string {
  const fromHere = relative(process.cwd(), path)
  return fromHere && !fromHere.startsWith('..') ? fromHere : path
}
