// The session machine as a Mermaid stateDiagram-v2, read from the machine definition itself so
// the picture cannot drift from the code.
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { sessionMachine } from './session.js';

const nodeId = (n: AnyStateNode): string => n.path.join('_');

const guardName = (t: AnyTransitionDefinition): string | undefined => {
  const g = t.guard as unknown;
  if (typeof g === 'string') return g;
  if (g && typeof g === 'object' && 'type' in g && typeof (g as { type: unknown }).type === 'string')
    return (g as { type: string }).type;
  return g ? 'guard' : undefined;
};

const actionNames = (t: AnyTransitionDefinition): string[] =>
  (t.actions as unknown[]).flatMap((a) =>
    typeof a === 'string'
      ? [a]
      : a && typeof a === 'object' && 'type' in a
        ? [String((a as { type: unknown }).type)]
        : [],
  );

function label(event: string, t: AnyTransitionDefinition): string {
  const guard = guardName(t);
  const actions = actionNames(t);
  return [event || 'always', guard ? `[${guard}]` : '', actions.length ? `/ ${actions.join(', ')}` : '']
    .filter(Boolean)
    .join(' ');
}

/** Transitions declared on `node`: [event, definition] pairs, eventless ones as ''. */
function declared(node: AnyStateNode): [string, AnyTransitionDefinition][] {
  const out: [string, AnyTransitionDefinition][] = [];
  for (const [event, list] of node.transitions) for (const t of list) out.push([event, t]);
  for (const t of node.always ?? []) out.push(['', t]);
  return out;
}

export function sessionMermaid(machine: AnyStateMachine = sessionMachine): string {
  const lines: string[] = ['stateDiagram-v2'];
  const root = machine.root;

  function emitNode(node: AnyStateNode, indent: string): void {
    const children = Object.values(node.states) as AnyStateNode[];
    const initial = node.initial?.target?.[0] as AnyStateNode | undefined;
    if (initial) lines.push(`${indent}[*] --> ${nodeId(initial)}`);
    for (const child of children) {
      if (Object.keys(child.states).length > 0) {
        lines.push(`${indent}state "${child.key}" as ${nodeId(child)} {`);
        emitNode(child, `${indent}  `);
        lines.push(`${indent}}`);
      } else if (child.path.length > 1) {
        lines.push(`${indent}state "${child.key}" as ${nodeId(child)}`);
      }
    }
    for (const child of children) {
      const inPlace: string[] = [];
      for (const [event, t] of declared(child)) {
        const targets = (t.target ?? []) as AnyStateNode[];
        if (targets.length === 0) inPlace.push(label(event, t));
        for (const target of targets)
          lines.push(`${indent}${nodeId(child)} --> ${nodeId(target)} : ${label(event, t)}`);
      }
      if (inPlace.length > 0)
        lines.push(
          `${indent}note right of ${nodeId(child)}`,
          ...inPlace.map((l) => `${indent}  ${l}`),
          `${indent}end note`,
        );
    }
  }

  emitNode(root, '  ');
  // Root-level transitions apply from every top-level state that does not handle the event itself.
  const tops = Object.values(root.states) as AnyStateNode[];
  const inPlace: string[] = [];
  for (const [event, t] of declared(root)) {
    const targets = (t.target ?? []) as AnyStateNode[];
    if (targets.length === 0) {
      inPlace.push(label(event, t));
      continue;
    }
    for (const target of targets) {
      for (const from of tops) {
        if (from === target || from.transitions.has(event)) continue;
        lines.push(`  ${nodeId(from)} --> ${nodeId(target)} : ${label(event, t)}`);
      }
    }
  }
  if (inPlace.length > 0)
    lines.push(
      '  note left of idle',
      '  in every state unless overridden:',
      ...inPlace.map((l) => `    ${l}`),
      '  end note',
    );
  return `${lines.join('\n')}\n`;
}
