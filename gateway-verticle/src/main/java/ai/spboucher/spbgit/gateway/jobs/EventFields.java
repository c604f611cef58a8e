package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What the {@link AuditEvent} records share when they write an entry or apply it to a job. An event
 * whose fields are exactly its record's components is written and read here, from the components:
 * in their order, each named in snake case ({@code revisedBy} is {@code revised_by}), nulls
 * included. Adding such a field is one edit, to the record.
 */
final class EventFields {

  private static final Pattern WORD_START = Pattern.compile("(?<=[a-z0-9])(?=[A-Z])");

  private static final ClassValue<RecordComponent[]> COMPONENTS =
      new ClassValue<>() {
        @Override
        protected RecordComponent[] computeValue(Class<?> type) {
          RecordComponent[] components = type.getRecordComponents();
          if (components == null
              || components.length == 0
              || !"job".equals(components[0].getName())) {
            throw new IllegalArgumentException(type + " is not an event record led by its job");
          }
          return components;
        }
      };

  private EventFields() {}

  /** The first fields of every entry: {@code event} and {@code job}. */
  static JsonObject head(AuditEvent event) {
    return new JsonObject().put("event", event.event()).put("job", event.job());
  }

  /** {@code event}'s entry: the head, then each component after {@code job}. */
  static JsonObject of(AuditEvent event) {
    JsonObject entry = head(event);
    RecordComponent[] components = COMPONENTS.get(event.getClass());
    for (int i = 1; i < components.length; i++) {
      entry.put(key(components[i]), value(components[i], event));
    }
    return entry;
  }

  /** The event of type {@code type} that {@code entry} holds, read as {@link #of} writes it. */
  static <E extends AuditEvent> E read(Class<E> type, JsonObject entry) {
    RecordComponent[] components = COMPONENTS.get(type);
    Object[] values = new Object[components.length];
    for (int i = 0; i < components.length; i++) {
      values[i] = read(components[i], entry);
    }
    try {
      Constructor<E> canonical =
          type.getDeclaredConstructor(
              Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new));
      return canonical.newInstance(values);
    } catch (InvocationTargetException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot make a " + type.getSimpleName(), e);
    }
  }

  /** {@code value}, or {@code fallback} when a runner left it null or empty. */
  static String nonEmpty(String value, String fallback) {
    return value == null || value.isEmpty() ? fallback : value;
  }

  private static String key(RecordComponent component) {
    return WORD_START.matcher(component.getName()).replaceAll("_").toLowerCase(Locale.ROOT);
  }

  private static Object value(RecordComponent component, Object event) {
    try {
      return component.getAccessor().invoke(event);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot read " + component, e);
    }
  }

  /**
   * One component from the entry, with the getter (and so the checks) the log was always read with.
   */
  private static Object read(RecordComponent component, JsonObject entry) {
    String key = key(component);
    Class<?> type = component.getType();
    if (type == String.class) {
      return entry.getString(key);
    } else if (type == long.class) {
      Long value = entry.getLong(key, 0L);
      return value == null ? 0L : value;
    } else if (type == Integer.class) {
      return entry.getInteger(key);
    } else if (type == JsonObject.class) {
      return entry.getJsonObject(key);
    } else if (type == JsonArray.class) {
      return entry.getJsonArray(key);
    }
    throw new IllegalArgumentException("no JSON reading for " + component);
  }
}
