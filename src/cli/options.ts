/**
 * Parsers for option values shared by several commands. Each throws commander's
 * InvalidArgumentError, which commander reports with the flag's name ("error: option
 * '--ids <ids...>' argument ',' is invalid. ...") and which exits as a usage error.
 */
import { InvalidArgumentError } from "commander";

export function positiveInteger(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isInteger(value) || value < 1) throw new InvalidArgumentError(`expected a positive integer, got '${text}'`);
  return value;
}

/**
 * "1,2" and "1 2" (repeated or variadic values) → [1, 2]. A list with no id in it
 * ("," or "") is refused: it would otherwise read as "no filter", i.e. every task.
 */
export function taskIdList(text: string, previous: number[] = []): number[] {
  const parts = text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
  const bad = parts.filter((part) => !/^\d+$/.test(part));
  if (bad.length > 0) throw new InvalidArgumentError(`expected task ids (non-negative integers), got '${bad[0]}'`);
  if (parts.length === 0) throw new InvalidArgumentError(`expected task ids like 1,2,7, got '${text}' (no id in it)`);
  return [...previous, ...parts.map(Number)];
}
