package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/**
 * The model spend a runner metered for a job, as {@code job_finished} records it and the API shows
 * it.
 */
public record Spend(String provider, String model, long inputTokens, long outputTokens) {

  /** The API form, {@code {provider, model, input_tokens, output_tokens}}. */
  public JsonObject toJson() {
    return new JsonObject()
        .put("provider", provider)
        .put("model", model)
        .put("input_tokens", inputTokens)
        .put("output_tokens", outputTokens);
  }
}
