// What the inspect page and the console page begin alike: the document up to their own head
// elements, and their header's title and relay link, whose state PAGE_SCRIPT_COMMON's showRelay
// sets (RELAY_MARKS draw it).

/** `<!doctype html>` through the viewport meta, with this title. */
export const pageHead = (title: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">`;

/** The relay link's dot (`data-connected`): green once connected, red while not. */
export const RELAY_MARKS = `  .relay[data-connected="true"]::before { content: "● "; color: #1e9e4a; }
  .relay[data-connected="false"]::before { content: "● "; color: #c2352b; }`;

/** The header's opening: the page's title, then the relay link showRelay finds by its id. */
export const headerStart = (title: string): string => `<header>
  <h1>${title}</h1>
  <span class="relay" id="relay" data-connected="false">connecting…</span>`;
