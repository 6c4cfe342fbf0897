// What the inspect page and the console page begin alike: the document up to their own head
// elements, and the marks of the relay link's state that PAGE_SCRIPT_COMMON's showRelay sets.

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
