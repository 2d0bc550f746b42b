import { createRequire } from "node:module";
import type { Page } from "puppeteer-core";

// Browser globals, for the function that runs in the page (the project compiles without the DOM library).
declare const document: any;
declare const axe: any;

const AXE_SOURCE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

/**
 * The WCAG 2 A and AA failures axe-core finds on the page as it is now: rule id, impact and the
 * first offending elements. The page must have been opened with `page.setBypassCSP(true)`:
 * the console's CSP rightly refuses the injected audit script.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => typeof (globalThis as any).axe !== "undefined"))) await page.addScriptTag({ path: AXE_SOURCE });
  const violations: Array<{ id: string; impact: string; targets: string[] }> = await page.evaluate(async () => {
    const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return result.violations.map((v: any) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n: any) => n.target.join(" ")) }));
  });
  return violations.map((v) => `${v.impact} ${v.id}: ${v.targets.join(", ")}`);
}
