/**
 * Questions an area asks of an area above it, which it may not import
 * (docs/architecture.md#dependency-rules): the asking area declares a slot with the question's
 * type, and the composition root (src/domain/event-handlers.ts) fills it at start-up with the
 * answering area's function. The slot holds code, never state: every server of a process fills
 * it with the same function.
 */
export class Provided<F extends (...args: any[]) => any> {
  private answer: F | null = null;

  /** @param question what the slot answers, for the error when nothing fills it. */
  constructor(private readonly question: string) {}

  /** Fills the slot (start-up). */
  provide(answer: F): void {
    this.answer = answer;
  }

  /**
   * Asks the question.
   *
   * @throws Error when nothing filled the slot (a start-up defect, never a user's).
   */
  ask(...args: Parameters<F>): ReturnType<F> {
    if (!this.answer) throw new Error(`Nothing answers: ${this.question}`);
    return this.answer(...args);
  }
}
