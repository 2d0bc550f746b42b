import { DEFAULT_RETRY_POLICY } from "../providers/provider-retry.js";
import { ChatCompletionsClient } from "../providers/llm/openai/chat-completions-client.js";
import { completionsEndpoint } from "../providers/llm/openai/completions-endpoint.js";
import type { OpenAiDialogueConfig } from "../providers/llm/openai/openai-dialogue-provider.js";
import type { AnalysisInput, CallAnalysis } from "./call-analysis.js";
import { analyzeWithModel } from "./model-call-analysis.js";
import { analyzeByRules } from "./rules-call-analysis.js";

/** How long a model's analysis may take, retries included, before the deterministic one is used. */
export const DEFAULT_ANALYSIS_TIMEOUT_MS = 20_000;

export interface CallAnalyzerOptions {
  /** The chat service the agents talk through; absent (the `rules` dialogue): the deterministic analysis only. */
  model?: Pick<OpenAiDialogueConfig, "url" | "apiKey" | "models">;
  /** Longest wait for the model's analysis, retries included. Default DEFAULT_ANALYSIS_TIMEOUT_MS. */
  timeoutMs?: number;
}

/**
 * Analyses ended calls: with a chat service configured, the model writes the analysis (one
 * structured-output request); when it fails or takes longer than `timeoutMs`, the
 * deterministic analysis stands in, marked `rules_fallback` with the reason. Without one,
 * the deterministic analysis (`rules`). Never rejects.
 */
export class CallAnalyzer {
  readonly #client: ChatCompletionsClient | null;
  readonly #models: Readonly<Record<string, string>>;
  readonly #timeoutMs: number;

  constructor(options: CallAnalyzerOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_ANALYSIS_TIMEOUT_MS;
    this.#models = Object.freeze({ ...(options.model?.models ?? {}) });
    this.#client = options.model
      ? new ChatCompletionsClient({
          endpoint: completionsEndpoint(options.model.url ?? "https://api.openai.com"),
          apiKey: options.model.apiKey || null,
          timeoutMs: this.#timeoutMs,
          retry: DEFAULT_RETRY_POLICY,
        })
      : null;
  }

  /** Whether analyses go to a model (and so may take seconds). */
  get usesModel(): boolean {
    return this.#client !== null;
  }

  /** The longest a model may take, retries included. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /**
   * `agentModel`: the agent's model name (`llm-large`, ...), mapped as its dialogue maps it.
   * `withinMs`: what is left of the time the model may take (default `timeoutMs`); at 0 the
   * deterministic analysis stands in at once.
   */
  async analyze(input: AnalysisInput, agentModel: string, options: { signal?: AbortSignal; withinMs?: number } = {}): Promise<CallAnalysis> {
    if (!this.#client) return analyzeByRules(input);
    const withinMs = Math.min(options.withinMs ?? this.#timeoutMs, this.#timeoutMs);
    const fallback = (reason: string): CallAnalysis => ({ ...analyzeByRules(input), source: "rules_fallback", fallback_reason: reason });
    if (withinMs <= 0) return fallback(`no time was left for the model within ${this.#timeoutMs} ms of the call's end`);
    const deadline = AbortSignal.timeout(withinMs);
    const bounded = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    try {
      return await analyzeWithModel(input, this.#client, this.#models[agentModel] ?? agentModel, bounded);
    } catch (err) {
      return fallback(deadline.aborted ? `the model did not answer within ${this.#timeoutMs} ms of the call's end` : (err as Error).message);
    }
  }
}
