/** The part of node-postgres (installed with @cap-js/postgres) the test setup uses. */
declare module 'pg' {
  export class Client {
    constructor(config: { host: string; port: number; user: string; database: string })
    connect(): Promise<void>
    query(sql: string, values?: unknown[]): Promise<{ rows: any[] }>
    end(): Promise<void>
  }
}
