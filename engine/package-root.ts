import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The package root (the folder with package.json) above `moduleUrl`, whether the module runs
 * from its source (tests) or from dist/ (built): for files shipped beside the code (the
 * recognizer binary, the console, fixtures/, dist/).
 */
export function packageRoot(moduleUrl: string = import.meta.url): string {
  let dir = path.dirname(fileURLToPath(moduleUrl));
  while (!existsSync(path.join(dir, "package.json"))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(moduleUrl)}`);
    dir = parent;
  }
  return dir;
}
