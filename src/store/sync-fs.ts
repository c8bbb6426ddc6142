/**
 * The node:fs functions the commands' path to the database uses, taken with require(). Bun 1.3
 * imports a builtin as ESM by reading every export, which runs node:fs's lazy getters (ReadStream,
 * WriteStream) and so loads all of node:stream: about a sixth of a `get pods` start-up, for
 * streams no read-only command uses. require() leaves them lazy.
 */
import fs = require("node:fs");

export const { closeSync, existsSync, fstatSync, ftruncateSync, linkSync, mkdirSync, openSync, readFileSync, realpathSync, statSync, unlinkSync, writeFileSync, writeSync } = fs;
