"""LangGraph: the generated tools as LangChain tools in a ToolNode, inside a two-node graph whose
model node is scripted (a bad argument, the corrected call, then the answer). No network.

python examples/frameworks/langgraph_tool_node.py
"""

from __future__ import annotations

from typing import Annotated, Any

from _weather import toolkit
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from toolnexus_runtime.integrations import langchain_tools
from typing_extensions import TypedDict


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


SCRIPT = [
    AIMessage("", tool_calls=[{"name": "get_weather", "args": {"town": "Oslo"}, "id": "t1"}]),
    AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": "t2"}]),
    AIMessage("It is 21C and clear in Oslo."),
]


def model(state: State) -> dict[str, Any]:
    last = state["messages"][-1]
    if isinstance(last, ToolMessage):
        print(f"  model got ToolMessage(status={last.status!r}): {str(last.content)[:75]}...")
    return {"messages": [SCRIPT[sum(isinstance(m, AIMessage) for m in state["messages"])]]}


def route(state: State) -> str:
    last = state["messages"][-1]
    return "tools" if isinstance(last, AIMessage) and last.tool_calls else END


if __name__ == "__main__":
    print("== LangGraph ToolNode")
    graph = StateGraph(State)
    graph.add_node("model", model)
    graph.add_node("tools", ToolNode(langchain_tools(toolkit())))
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, ["tools", END])
    graph.add_edge("tools", "model")
    final = graph.compile().invoke({"messages": [("user", "Weather in Oslo?")]})
    print(f"  answer: {final['messages'][-1].content}")
