// Loads each native module once under the Node.js that runs this, and uses it a little: a module
// compiled for another Node (NODE_MODULE_VERSION), or missing a library, shows here at setup
// rather than at the first call. Exit 1 naming each one that fails. Run by `npm run setup`.
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

const CHECKS: Array<[name: string, use: () => void]> = [
  [
    "better-sqlite3",
    () => {
      const Database = require("better-sqlite3");
      const db = new Database(":memory:");
      db.prepare("SELECT 1").get();
      db.close();
    },
  ],
  [
    "@discordjs/opus",
    () => {
      const { OpusEncoder } = require("@discordjs/opus");
      new OpusEncoder(48000, 1).encode(Buffer.alloc(1920));
    },
  ],
  ["onnxruntime-node", () => void require("onnxruntime-node").InferenceSession],
];

let failed = 0;
for (const [name, use] of CHECKS) {
  try {
    use();
  } catch (err) {
    failed++;
    console.error(`check-native-modules: ${name} does not load under Node ${process.version}: ${(err as Error).message.split("\n")[0]}`);
  }
}
if (failed > 0) {
  console.error(
    "check-native-modules: rebuild it for this Node with the headers of this very version: npm rebuild <module> --nodedir=<a directory holding include/node> (npm run setup finds them beside the node binary; see README, Node.js versions)",
  );
  process.exit(1);
}
console.log(`check-native-modules: ${CHECKS.map(([name]) => name).join(", ")} load under Node ${process.version}`);
