import type { Services } from "../../services/container.js";
import { presentAppointment } from "../presenters/appointment.js";
import { defineRoute, type RouteSpec } from "../route.js";
import { appointmentListSchema, appointmentSchema, listAppointmentsQuery, updateAppointmentBody } from "../schemas/appointments.js";
import { idParam } from "../schemas/common.js";

const appointmentIdParam = idParam("appointment_id");

export function appointmentRoutes({ appointments }: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/v1/appointments",
      operationId: "listAppointments",
      summary: "List appointments booked during calls",
      tag: "Appointments",
      permission: "appointments:read",
      query: listAppointmentsQuery,
      response: appointmentListSchema,
      status: 200,
      errors: ["invalid_request", "invalid_cursor", "invalid_status", "invalid_date_format"],
      handler: async ({ auth, query }) => {
        const { status, call_id, from_date, to_date, ...page } = query;
        const result = await appointments.list(auth.account.id, { status, callId: call_id, fromDate: from_date, toDate: to_date }, page);
        return { ...result, data: result.data.map(presentAppointment) };
      },
    }),
    defineRoute({
      method: "get",
      path: "/v1/appointments/:appointment_id",
      operationId: "getAppointment",
      summary: "Read an appointment",
      tag: "Appointments",
      permission: "appointments:read",
      params: appointmentIdParam,
      response: appointmentSchema,
      status: 200,
      errors: ["appointment_not_found", "unauthorized"],
      handler: async ({ auth, params }) => presentAppointment(await appointments.get(auth.account.id, params.appointment_id)),
    }),
    defineRoute({
      method: "patch",
      path: "/v1/appointments/:appointment_id",
      operationId: "updateAppointment",
      summary: "Reschedule or correct an appointment (only the given fields change; a new customer_phone, or a new date or time when the agent places reminder calls, needs calls:write too)",
      tag: "Appointments",
      permission: "appointments:write",
      params: appointmentIdParam,
      body: updateAppointmentBody,
      response: appointmentSchema,
      status: 200,
      errors: ["appointment_not_found", "unauthorized", "invalid_request", "invalid_date_format", "invalid_phone_number", "appointment_already_cancelled"],
      handler: async ({ auth, params, body }) => presentAppointment(await appointments.update(auth.account.id, params.appointment_id, body, auth.permissions)),
    }),
    defineRoute({
      method: "post",
      path: "/v1/appointments/:appointment_id/cancel",
      operationId: "cancelAppointment",
      summary: "Cancel an appointment",
      tag: "Appointments",
      permission: "appointments:write",
      params: appointmentIdParam,
      response: appointmentSchema,
      status: 200,
      errors: ["appointment_not_found", "unauthorized", "appointment_already_cancelled"],
      handler: async ({ auth, params }) => presentAppointment(await appointments.cancel(auth.account.id, params.appointment_id)),
    }),
  ];
}
