/** @cap-js/sqlite ships no type declarations; its service class is extended in sqlite-file.ts. */
declare module '@cap-js/sqlite'
