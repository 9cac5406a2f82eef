/** The spec's five phase rules, checked before a subscription is stored. Pure. */
import type { Interval } from './calendar';

export interface PhaseShape {
  start: Date;
  end: Date | null;
  items: { recurring: boolean; interval: Interval | null; interval_count: number | null }[];
}

export interface PhaseRuleViolation {
  rule: 'phase_has_items' | 'same_interval' | 'no_overlap' | 'no_gaps' | 'one_active';
  message: string;
  index: number;
}

export function validatePhases(phases: PhaseShape[]): PhaseRuleViolation | null {
  for (let i = 0; i < phases.length; i++) {
    const p = phases[i];
    if (p.items.length === 0) return { rule: 'phase_has_items', message: `Phase ${i + 1} must have at least one item`, index: i };
    const recurring = p.items.filter((it) => it.recurring);
    if (recurring.some((it) => it.interval !== recurring[0].interval || it.interval_count !== recurring[0].interval_count)) {
      return { rule: 'same_interval', message: `All recurring items of phase ${i + 1} must share the same interval`, index: i };
    }
    if (p.end && p.end <= p.start) return { rule: 'no_overlap', message: `Phase ${i + 1} must end after it starts`, index: i };
    const next = phases[i + 1];
    if (!next) continue;
    if (!p.end) return { rule: 'one_active', message: `Phase ${i + 1} has no end date, so phase ${i + 2} would be active at the same time`, index: i };
    if (next.start < p.end) return { rule: 'no_overlap', message: `Phase ${i + 2} starts before phase ${i + 1} ends`, index: i + 1 };
    if (next.start > p.end) return { rule: 'no_gaps', message: `Phase ${i + 2} must start when phase ${i + 1} ends`, index: i + 1 };
  }
  return null;
}
