// htm bound to preact: html`<p>${text}</p>`, no build step.
import { h } from "preact";
import htm from "htm";

export const html = htm.bind(h);
