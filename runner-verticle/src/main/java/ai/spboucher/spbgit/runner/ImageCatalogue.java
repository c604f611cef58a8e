package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.proto.Subjects;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The images a runner may offer, by the names repositories use in {@code .spbgit/agent.yml} ({@code
 * image:}): {@code SPB_IMAGES=base=spbgit/agent:latest,python=spbgit/agent-python:latest}. Without
 * {@code SPB_IMAGES} it is {@code base} = {@code SPB_AGENT_IMAGE} (required, as before catalogues)
 * plus {@code python} and {@code node} named as {@code docker/job-image/build.sh} names them after
 * {@code SPB_AGENT_IMAGE} (optional: offered only when built on this engine). Every image listed in
 * {@code SPB_IMAGES} is required: the runner does not start without it. Plain data, no Docker:
 * {@link #offer} resolves it with the engine's image ids.
 */
public record ImageCatalogue(List<Entry> entries) {

  /** The variants build.sh makes besides base; keep in step with its VARIANTS table. */
  static final List<String> BUILT_VARIANTS = List.of("python", "node");

  /**
   * One name of the catalogue.
   *
   * @param required the runner refuses to start when the image is missing; otherwise it just does
   *     not offer it
   */
  public record Entry(String name, String image, boolean required) {}

  public ImageCatalogue {
    entries = List.copyOf(entries);
    if (entries.isEmpty()) {
      throw new IllegalArgumentException("SPB_IMAGES names no image");
    }
  }

  /**
   * Parses {@code SPB_IMAGES} ({@code name=image,...}); when it is blank, the default catalogue
   * built on {@code agentImage} ({@code SPB_AGENT_IMAGE}).
   */
  public static ImageCatalogue parse(String spec, String agentImage) {
    if (spec == null || spec.isBlank()) {
      List<Entry> entries = new ArrayList<>();
      entries.add(new Entry(Subjects.DEFAULT_IMAGE, agentImage, true));
      for (String variant : BUILT_VARIANTS) {
        entries.add(new Entry(variant, variantOf(agentImage, variant), false));
      }
      return new ImageCatalogue(entries);
    }
    Map<String, Entry> byName = new LinkedHashMap<>();
    for (String item : spec.split("[,\\s]+")) {
      if (item.isBlank()) {
        continue;
      }
      int eq = item.indexOf('=');
      if (eq <= 0 || eq == item.length() - 1) {
        throw new IllegalArgumentException("SPB_IMAGES entries are name=image, got '" + item + "'");
      }
      String name = item.substring(0, eq);
      String image = item.substring(eq + 1);
      if (!Subjects.IMAGE_NAME.matcher(name).matches()) {
        throw new IllegalArgumentException(
            "SPB_IMAGES: image name '"
                + name
                + "' must match "
                + Subjects.IMAGE_NAME.pattern()
                + " (it is a NATS subject token)");
      }
      if (!image.matches("[A-Za-z0-9][A-Za-z0-9._/:@-]*")) {
        throw new IllegalArgumentException(
            "SPB_IMAGES: '" + image + "' is not a Docker image reference");
      }
      if (byName.put(name, new Entry(name, image, true)) != null) {
        throw new IllegalArgumentException("SPB_IMAGES names '" + name + "' twice");
      }
    }
    return new ImageCatalogue(new ArrayList<>(byName.values()));
  }

  /**
   * build.sh's name for variant {@code v} of {@code base}: {@code -v} appended to the repository.
   */
  static String variantOf(String base, String variant) {
    int slash = base.lastIndexOf('/');
    int colon = base.lastIndexOf(':');
    if (base.contains("@") || colon <= slash) {
      return base.contains("@")
          ? base.substring(0, base.indexOf('@')) + "-" + variant
          : base + "-" + variant;
    }
    return base.substring(0, colon) + "-" + variant + base.substring(colon);
  }

  /**
   * An image this runner offers: its catalogue name, reference and id ({@code sha256:...}) on this
   * engine.
   */
  public record Offered(String name, String image, String digest) {}

  /**
   * The images to offer, in catalogue order: those whose {@code idOf} (the engine's image id, null
   * when missing) is known. Fails on a missing required image.
   */
  public Map<String, Offered> offer(Function<String, String> idOf) {
    Map<String, Offered> offered = new LinkedHashMap<>();
    for (Entry entry : entries) {
      String id = idOf.apply(entry.image());
      if (id != null) {
        offered.put(entry.name(), new Offered(entry.name(), entry.image(), id));
      } else if (entry.required()) {
        throw new IllegalStateException(
            "image "
                + entry.image()
                + " ('"
                + entry.name()
                + "' in the catalogue) is "
                + "missing: build it with docker/job-image/build.sh, or leave it out of SPB_IMAGES");
      }
    }
    return Collections.unmodifiableMap(offered);
  }

  /** The entry named {@code name}, or null. */
  public Entry entry(String name) {
    return entries.stream().filter(e -> e.name().equals(name)).findFirst().orElse(null);
  }
}
