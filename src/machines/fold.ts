// Steps a machine by walking its own definition, without XState's interpreter: the same
// transition selection (deepest state first, first passing guard, then eventless transitions
// until none is enabled), the same pure steps, the same assign semantics. XState's transition()
// costs ~15 µs per input, most of it snapshot and microstep bookkeeping; a log replay at start
// feeds tens of thousands of inputs, and the host steps every unobserved session through this.
// Only the statechart subset the session machine uses is compiled (compound and atomic states,
// named guards, actions written as pure steps); anything else compiles to the reason it cannot,
// and the caller keeps stepping through machine.transition().
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition, StateValue } from 'xstate';

/** One step of an action as data: the context patch to assign and the outputs to emit, or nothing for this event. */
export type PureStep<C = unknown, E = unknown, O = unknown> = (
  context: C,
  event: E,
) => { context?: Partial<C>; outputs: readonly O[] } | undefined;

const pureSteps = new WeakMap<object, PureStep>();

/** Marks an action (an `enqueueActions` that assigns and emits what `step` returns) as foldable. */
export function foldable<A extends object, C, E, O>(action: A, step: PureStep<C, E, O>): A {
  pureSteps.set(action, step as PureStep);
  return action;
}

type Guard = (args: { context: unknown; event: unknown }, params: undefined) => boolean;

interface Candidate {
  guard: Guard | undefined;
  steps: PureStep[];
  /** The leaf this transition lands in; undefined for a targetless one. */
  target: Leaf | undefined;
}

interface Leaf {
  value: StateValue;
  /** Candidates per event type, this leaf's first, then each ancestor's (XState's selection order). */
  on: Map<string, Candidate[]>;
  always: Candidate[];
}

/** A machine's state as data: its state value and context. */
export interface FoldState<C> {
  value: StateValue;
  context: C;
}

export interface Fold<C, E extends { type: string }, O> {
  /** The state an actor started with `input` is in (the machine's context factory, its initial states). */
  initial(input: unknown): FoldState<C>;
  /** Moves `state` (in place) to where `event` takes it; outputs are appended to `outputs` when given. */
  step(state: FoldState<C>, event: E, outputs?: O[]): void;
}

/** Why a machine cannot be folded, or undefined when it can. */
function unsupportedNode(node: AnyStateNode): string | undefined {
  if (node.type !== 'atomic' && node.type !== 'compound') return `${node.id} is ${node.type}`;
  if (node.entry.length > 0 || node.exit.length > 0) return `${node.id} has entry or exit actions`;
  if (node.invoke.length > 0) return `${node.id} invokes`;
  if (node.type === 'compound' && (node.initial.target?.length !== 1 || node.initial.actions.length > 0))
    return `${node.id} has no single plain initial state`;
  return undefined;
}

const STEP_LIMIT = 100;

/**
 * Compiles `machine` into a fold, or returns the reason it cannot (then step it with
 * machine.transition()). The result equals XState's for every input; test/machines/fold tests
 * it against machine.transition() on arbitrary input sequences.
 */
export function compileFold<C, E extends { type: string }, O>(machine: AnyStateMachine): Fold<C, E, O> | string {
  const nodes: AnyStateNode[] = [];
  const walk = (n: AnyStateNode): void => {
    nodes.push(n);
    for (const child of Object.values(n.states) as AnyStateNode[]) walk(child);
  };
  walk(machine.root);
  for (const n of nodes) {
    const why = unsupportedNode(n);
    if (why) return why;
  }
  if (machine.root.type !== 'compound') return 'the root has no states';
  const leaves = compileLeaves(machine, nodes);
  return typeof leaves === 'string' ? leaves : foldOver<C, E, O>(machine, leaves);
}

/** The leaf a transition to `n` lands in: `n` itself or its initial descendants. */
const landing = (n: AnyStateNode): AnyStateNode => (n.type === 'compound' ? landing(n.initial.target![0]!) : n);

/**
 * Every atomic state of the machine as a leaf: its candidates per event type and its eventless
 * ones, with guards and steps looked up once; a part that is not plain data is the reason.
 */
function compileLeaves(machine: AnyStateMachine, nodes: readonly AnyStateNode[]): Map<AnyStateNode, Leaf> | string {
  const guards = machine.implementations.guards as Record<string, unknown>;
  const actions = machine.implementations.actions as Record<string, unknown>;
  const leaves = new Map<AnyStateNode, Leaf>();

  let problem: string | undefined;
  const guardOf = (t: AnyTransitionDefinition): Guard | undefined => {
    const g = t.guard as unknown;
    if (g === undefined) return undefined;
    const impl = typeof g === 'string' ? guards[g] : typeof g === 'function' ? g : undefined;
    if (typeof impl !== 'function' || 'check' in impl)
      problem ??= `guard ${String(typeof g === 'string' ? g : 'object')} is not a plain function`;
    return impl as Guard;
  };
  const stepsOf = (t: AnyTransitionDefinition): PureStep[] =>
    (t.actions as unknown[]).map((a) => {
      const impl = typeof a === 'string' ? actions[a] : a;
      const step = typeof impl === 'object' || typeof impl === 'function' ? pureSteps.get(impl as object) : undefined;
      if (!step) problem ??= `action ${typeof a === 'string' ? a : 'inline'} is not a pure step`;
      return step!;
    });
  const candidate = (t: AnyTransitionDefinition): Candidate => {
    if (t.target !== undefined && t.target.length !== 1)
      problem ??= `a transition from ${t.source.id} has ${t.target.length} targets`;
    return { guard: guardOf(t), steps: stepsOf(t), target: undefined };
  };
  // Targets point at leaves, so every leaf exists before any target is resolved.
  const pending: [Candidate, AnyStateNode][] = [];
  const chain = (leafNode: AnyStateNode): AnyStateNode[] => {
    const out: AnyStateNode[] = [];
    for (let n: AnyStateNode | undefined = leafNode; n; n = n.parent) out.push(n);
    return out;
  };
  const compiled = new Map<AnyTransitionDefinition, Candidate>();
  const compile = (t: AnyTransitionDefinition): Candidate => {
    let c = compiled.get(t);
    if (!c) {
      c = candidate(t);
      compiled.set(t, c);
      if (t.target?.[0]) pending.push([c, landing(t.target[0])]);
    }
    return c;
  };
  for (const leafNode of nodes.filter((n) => n.type === 'atomic')) {
    const on = new Map<string, Candidate[]>();
    const always: Candidate[] = [];
    for (const n of chain(leafNode)) {
      for (const [descriptor, list] of n.transitions as Map<string, AnyTransitionDefinition[]>) {
        if (descriptor.includes('*') || descriptor.startsWith('xstate.')) return `${n.id} takes ${descriptor}`;
        const all = on.get(descriptor) ?? [];
        for (const t of list) all.push(compile(t));
        on.set(descriptor, all);
      }
      for (const t of n.always ?? []) always.push(compile(t));
    }
    const path = leafNode.path;
    let value: StateValue = path[path.length - 1]!;
    for (let i = path.length - 2; i >= 0; i -= 1) value = Object.freeze({ [path[i]!]: value });
    leaves.set(leafNode, { value, on, always });
  }
  if (problem) return problem;
  for (const [c, n] of pending) c.target = leaves.get(n);
  return leaves;
}

/** Steps over the compiled leaves: XState's selection, assign semantics and eventless settling. */
function foldOver<C, E extends { type: string }, O>(
  machine: AnyStateMachine,
  leaves: ReadonlyMap<AnyStateNode, Leaf>,
): Fold<C, E, O> {
  // The value of a top-level atomic state is its name: the common case, looked up directly.
  const atomicByName = new Map<string, Leaf>();
  for (const [n, leaf] of leaves) if (n.parent === machine.root) atomicByName.set(n.key, leaf);
  const leafOf = (value: StateValue): Leaf => {
    const direct = typeof value === 'string' ? atomicByName.get(value) : undefined;
    if (direct !== undefined) return direct;
    let node = machine.root;
    let v: StateValue | undefined = value;
    while (node.type === 'compound' && v !== undefined) {
      const key: string = typeof v === 'string' ? v : Object.keys(v)[0]!;
      const child = node.states[key] as AnyStateNode | undefined;
      if (!child) throw new Error(`state ${JSON.stringify(value)} is not one of machine ${machine.id}`);
      node = child;
      v = typeof v === 'string' ? undefined : (v as Record<string, StateValue>)[key];
    }
    return leaves.get(landing(node))!;
  };

  // Guards only read their arguments, so one object serves every call (XState builds one per call).
  const args: { context: unknown; event: unknown } = { context: undefined, event: undefined };
  const enabled = (list: readonly Candidate[] | undefined, context: unknown, event: unknown): Candidate | undefined => {
    if (list === undefined) return undefined;
    args.context = context;
    args.event = event;
    for (const c of list) if (c.guard === undefined || c.guard(args, undefined)) return c;
    return undefined;
  };
  const run = (c: Candidate, context: C, event: E, outputs: O[] | undefined): C => {
    let ctx = context;
    for (const step of c.steps) {
      const s = step(ctx, event);
      if (s === undefined) continue;
      // XState's assign: a shallow copy with the patch's own keys over it (undefined values
      // included); even an empty patch makes a new context, which the host reads as a change.
      if (s.context) ctx = Object.assign({}, ctx, s.context);
      if (outputs) for (const o of s.outputs) outputs.push(o as O);
    }
    return ctx;
  };

  const factory = machine.config.context as unknown;
  const noSpawn = (): never => {
    throw new Error(`machine ${machine.id}: its context factory spawns; fold it with machine.transition()`);
  };
  /** Runs the eventless transitions from `leafAt`, then moves `state` there (only once all succeeded). */
  const settle = (state: FoldState<C>, leafAt: Leaf, context: C, event: E, outputs: O[] | undefined): void => {
    let leaf = leafAt;
    let ctx = context;
    // Eventless transitions see the triggering event, as in XState, until none is enabled or
    // one changes nothing (XState stops there as well).
    for (let i = 0; ; i += 1) {
      if (i === STEP_LIMIT)
        throw new Error(`machine ${machine.id}: eventless transitions did not settle after ${STEP_LIMIT} steps`);
      const a = enabled(leaf.always, ctx, event);
      if (!a) break;
      const before = ctx;
      const from = leaf;
      ctx = run(a, ctx, event, outputs);
      if (a.target) leaf = a.target;
      if (leaf === from && ctx === before) break;
    }
    state.value = leaf.value;
    state.context = ctx;
  };

  return {
    initial(input) {
      // XState assigns what the factory returns over an empty context: a copy of it.
      const made = (
        typeof factory === 'function'
          ? (factory as (a: object) => C)({ input, spawn: noSpawn, self: undefined })
          : factory
      ) as C;
      const state: FoldState<C> = { value: '', context: made };
      settle(
        state,
        leaves.get(landing(machine.root))!,
        Object.assign({}, made) as C,
        { type: 'xstate.init', input } as unknown as E,
        undefined,
      );
      return state;
    },
    step(state, event, outputs) {
      let leaf = leafOf(state.value);
      let ctx = state.context;
      const t = enabled(leaf.on.get(event.type), ctx, event);
      if (t) {
        ctx = run(t, ctx, event, outputs);
        if (t.target) leaf = t.target;
      }
      settle(state, leaf, ctx, event, outputs);
    },
  };
}
