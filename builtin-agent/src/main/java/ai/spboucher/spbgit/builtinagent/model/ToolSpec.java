package ai.spboucher.spbgit.builtinagent.model;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A tool as the model sees it.
 *
 * @param schema a JSON schema of type object for the arguments
 */
public record ToolSpec(String name, String description, ObjectNode schema) {}
