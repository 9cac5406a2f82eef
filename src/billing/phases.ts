/**
 * The spec's five phase rules (api-spec.md, Subscriptions), checked before a subscription is
 * stored. Phases are given in order; `end` is exclusive and null means open-ended.
 *
 * 1. `phase_has_items`: each phase has at least one item.
 * 2. `same_interval`: all recurring items of a phase share the same interval AND
 *    interval_count (so a phase has one billing cycle).
 * 3. `no_overlap`: a phase ends after it starts, and the next phase does not start before it
 *    ends.
 * 4. `no_gaps`: the next phase starts exactly when the previous one ends.
 * 5. `one_active`: only the last phase may be open-ended (an open-ended phase followed by
 *    another would make two phases active at once).
 * Plus `valid_dates`: every start (and end, when given) is a valid date.
 *
 * Together they make the phases a contiguous, ordered, non-overlapping sequence, so at most
 * one phase is active at any instant. Pure.
 */
import type { Interval } from './calendar';

export interface PhaseShape {
  start: Date;
  end: Date | null;
  items: { recurring: boolean; interval: Interval | null; interval_count: number | null }[];
}

export interface PhaseRuleViolation {
  rule: 'phase_has_items' | 'same_interval' | 'no_overlap' | 'no_gaps' | 'one_active' | 'valid_dates';
  message: string;
  /** 0-based index of the offending phase. */
  index: number;
}

const invalid = (d: Date | null | undefined) => !(d instanceof Date) || Number.isNaN(d.getTime());

/** The first rule broken, in phase order (then rule order), or null when the phases are valid. */
export function validatePhases(phases: PhaseShape[]): PhaseRuleViolation | null {
  for (let i = 0; i < phases.length; i++) {
    const p = phases[i];
    if (invalid(p.start) || (p.end !== null && invalid(p.end))) {
      return { rule: 'valid_dates', message: `Phase ${i + 1} must have valid start and end dates`, index: i };
    }
    if (p.items.length === 0) return { rule: 'phase_has_items', message: `Phase ${i + 1} must have at least one item`, index: i };
    const recurring = p.items.filter((it) => it.recurring);
    if (recurring.some((it) => it.interval !== recurring[0].interval || it.interval_count !== recurring[0].interval_count)) {
      return { rule: 'same_interval', message: `All recurring items of phase ${i + 1} must share the same interval`, index: i };
    }
    if (p.end && p.end <= p.start) return { rule: 'no_overlap', message: `Phase ${i + 1} must end after it starts`, index: i };
    const next = phases[i + 1];
    if (!next) continue;
    if (!p.end) return { rule: 'one_active', message: `Phase ${i + 1} has no end date, so phase ${i + 2} would be active at the same time`, index: i };
    if (invalid(next.start)) continue; // reported as valid_dates on the next round
    if (next.start < p.end) return { rule: 'no_overlap', message: `Phase ${i + 2} starts before phase ${i + 1} ends`, index: i + 1 };
    if (next.start > p.end) return { rule: 'no_gaps', message: `Phase ${i + 2} must start when phase ${i + 1} ends`, index: i + 1 };
  }
  return null;
}

const DAY_MS = 86_400_000;

/**
 * How far back the first phase may start. A subscription starting in the past bills every
 * period since its start on its first run (catch-up), so this bounds that work: at most a
 * year of daily renewals.
 */
export const MAX_BACKDATE_DAYS = 366;

/** How far from now any subscription date (phase start or end, billing cycle anchor) may lie. */
export const MAX_YEARS_FROM_NOW = 100;

export interface DateWindowViolation {
  param: 'phases[][start_date]' | 'phases[][end_date]' | 'billing_cycle_anchor';
  message: string;
}

/**
 * Dates a subscription may use, relative to `now`: phases start at most
 * {@link MAX_BACKDATE_DAYS} back; every date lies within {@link MAX_YEARS_FROM_NOW} years.
 * Outside that window no real merchant need is served, and the billing work (catch-up
 * invoices, timers) would be unbounded.
 */
export function dateWindowViolation(phases: { start: Date; end: Date | null }[], anchor: Date | null, now: Date): DateWindowViolation | null {
  const earliestStart = now.getTime() - MAX_BACKDATE_DAYS * DAY_MS;
  const span = MAX_YEARS_FROM_NOW * 365.2425 * DAY_MS;
  const outside = (d: Date) => Math.abs(d.getTime() - now.getTime()) > span;
  for (const p of phases) {
    if (p.start.getTime() < earliestStart) {
      return { param: 'phases[][start_date]', message: `A phase may start at most ${MAX_BACKDATE_DAYS} days in the past` };
    }
    if (outside(p.start)) return { param: 'phases[][start_date]', message: `Phase dates must be within ${MAX_YEARS_FROM_NOW} years from now` };
    if (p.end && outside(p.end)) return { param: 'phases[][end_date]', message: `Phase dates must be within ${MAX_YEARS_FROM_NOW} years from now` };
  }
  if (anchor && outside(anchor)) return { param: 'billing_cycle_anchor', message: `The billing cycle anchor must be within ${MAX_YEARS_FROM_NOW} years from now` };
  return null;
}
