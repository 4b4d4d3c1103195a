print("meshchat")
