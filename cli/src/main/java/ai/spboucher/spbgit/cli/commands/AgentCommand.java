package ai.spboucher.spbgit.cli.commands;

import picocli.CommandLine.Command;

/** {@code spbgit agent ...}: the agent jobs of the owner's repositories. */
@Command(
    name = "agent",
    mixinStandardHelpOptions = true,
    description = "Start, follow, review and decide agent jobs.",
    subcommands = {
      AgentRunCommand.class,
      AgentListCommand.class,
      AgentShowCommand.class,
      AgentLogsCommand.class,
      AgentApproveCommand.class,
      AgentRejectCommand.class,
      AgentCommentCommand.class,
      AgentReviseCommand.class,
      AgentCancelCommand.class,
      AgentDeleteRefsCommand.class,
      AgentEnvCommand.class
    })
public final class AgentCommand {}
